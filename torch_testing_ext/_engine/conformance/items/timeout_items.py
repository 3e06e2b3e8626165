"""Timeouts: a group's timeout ends a collective one rank never joins, on every other rank, within
seconds; destroy_process_group of a subgroup leaves the default group working."""

from __future__ import annotations

import datetime
import time

import torch.distributed as dist

from ..contract import Context, expect_equal, expect_group_works, expect_raises, expect_true, item


@item("timeouts", "collective_times_out")
def collective_times_out(ctx: Context) -> None:
    """With a 1 s group timeout, an all_reduce the last rank joins 2.5 s late raises on the others within 5 s."""
    group = dist.new_group(list(range(ctx.world_size)), timeout=datetime.timedelta(seconds=1))
    absent = ctx.world_size - 1
    tensor = ctx.full((2,), 1)
    if ctx.rank != absent:
        start = time.monotonic()
        expect_raises(RuntimeError, lambda: dist.all_reduce(tensor, group=group),
                      ctx.call("all_reduce", tensor, timeout="1 s", absent=absent))
        took = time.monotonic() - start
        expect_true(took < 5, ctx.call("all_reduce", tensor, timeout="1 s"), f"raised after {took:.1f} s")
    else:
        # it comes after the others gave up (so that every rank made the same calls): whatever its
        # call does, it must not hang
        time.sleep(2.5)
        start = time.monotonic()
        try:
            dist.all_reduce(tensor, group=group)
        except RuntimeError:
            pass
        took = time.monotonic() - start
        expect_true(took < 5, ctx.call("all_reduce", tensor, timeout="1 s", late=True), f"returned after {took:.1f} s")
    expect_group_works(ctx, "a subgroup's timeout")  # the default group (its own timeout) is untouched


@item("timeouts", "destroy_subgroup")
def destroy_subgroup(ctx: Context) -> None:
    """destroy_process_group(subgroup) ends the subgroup; the default group works after, and a new group too."""
    members = list(range(ctx.world_size))
    group = dist.new_group(members)
    tensor = ctx.full((2,), 1)
    dist.all_reduce(tensor, group=group)
    expect_equal(tensor, ctx.full((2,), ctx.world_size), ctx.call("all_reduce", tensor, group="subgroup"))
    dist.destroy_process_group(group)
    expect_group_works(ctx, "destroy_process_group(subgroup)")
    expect_group_works(ctx, "destroy_process_group(subgroup), on a new group", dist.new_group(members))
