"""Groups: new_group over a subset and over every rank, subgroups by enumeration, split_group (when
torch has it), and ranks that are not members carrying on."""

from __future__ import annotations

from typing import Any

import torch.distributed as dist

from ..contract import Context, expect_equal, expect_group_works, expect_true, item


def _check_group(ctx: Context, group: Any, members: list[int], name: str) -> None:
    """A member's group numbers its members in order, and all_reduce sums over them alone."""
    expect_equal(dist.get_world_size(group), len(members), ctx.call(f"get_world_size({name})"))
    expect_equal(dist.get_rank(group), members.index(ctx.rank), ctx.call(f"get_rank({name})"))
    expect_equal(dist.get_process_group_ranks(group), members, ctx.call(f"get_process_group_ranks({name})"))
    tensor = ctx.full((3,), ctx.rank + 1)
    dist.all_reduce(tensor, group=group)
    expect_equal(tensor, ctx.full((3,), sum(rank + 1 for rank in members)), ctx.call("all_reduce", tensor, group=name))


@item("groups", "new_group_whole")
def new_group_whole(ctx: Context) -> None:
    """new_group over every rank (listed backwards) is a group of every rank, in rank order."""
    members = list(range(ctx.world_size))
    group = dist.new_group(list(reversed(members)))
    _check_group(ctx, group, members, "new_group(every rank)")


@item("groups", "new_group_subset")
def new_group_subset(ctx: Context) -> None:
    """new_group over the last two ranks: they reduce over the two alone; the others are not members."""
    members = [ctx.world_size - 2, ctx.world_size - 1]
    group = dist.new_group(members)
    if ctx.rank in members:
        _check_group(ctx, group, members, f"new_group({members})")
        expect_equal(dist.get_global_rank(group, 1), members[1], ctx.call("get_global_rank", group_rank=1))
        expect_equal(dist.get_group_rank(group, members[0]), 0, ctx.call("get_group_rank", rank=members[0]))
    else:
        expect_true(group == dist.GroupMember.NON_GROUP_MEMBER, ctx.call(f"new_group({members})"),
                    f"a non-member got {group!r}, not GroupMember.NON_GROUP_MEMBER")


@item("groups", "non_member_carries_on", min_world_size=3)
def non_member_carries_on(ctx: Context) -> None:
    """A non-member gets NON_GROUP_MEMBER, its collectives on it return untouched, and it carries on.

    It carries on in the default group, whose all_reduce sums over every rank."""
    group = dist.new_group([0, 1])
    tensor = ctx.full((2,), ctx.rank + 1)
    dist.all_reduce(tensor, group=group)
    if ctx.rank < 2:
        expect_equal(tensor, ctx.full((2,), 3), ctx.call("all_reduce", tensor, group="[0, 1]"))
    else:
        expect_true(group == dist.GroupMember.NON_GROUP_MEMBER, ctx.call("new_group([0, 1])"),
                    f"a non-member got {group!r}")
        expect_equal(tensor, ctx.full((2,), ctx.rank + 1), ctx.call("all_reduce", tensor, group="not a member"))
    expect_group_works(ctx, "a group of some ranks")


@item("groups", "two_groups_interleaved")
def two_groups_interleaved(ctx: Context) -> None:
    """Two groups over the same ranks keep their collectives apart."""
    members = list(range(ctx.world_size))
    first, second = dist.new_group(members), dist.new_group(members)
    one, other = ctx.full((2,), ctx.rank + 1), ctx.full((2,), 10 * (ctx.rank + 1))
    works = [dist.all_reduce(one, group=first, async_op=True), dist.all_reduce(other, group=second, async_op=True)]
    for work in works:
        work.wait()
    total = sum(rank + 1 for rank in members)
    expect_equal(one, ctx.full((2,), total), ctx.call("all_reduce", one, group="first"))
    expect_equal(other, ctx.full((2,), 10 * total), ctx.call("all_reduce", other, group="second"))


@item("groups", "new_subgroups_by_enumeration")
def new_subgroups_by_enumeration(ctx: Context) -> None:
    """new_subgroups_by_enumeration into even and odd ranks: each rank gets its own subgroup."""
    evens, odds = list(range(0, ctx.world_size, 2)), list(range(1, ctx.world_size, 2))
    mine, _ = dist.new_subgroups_by_enumeration([evens, odds])
    _check_group(ctx, mine, evens if ctx.rank % 2 == 0 else odds, "new_subgroups_by_enumeration")


@item("groups", "new_subgroups")
def new_subgroups(ctx: Context) -> None:
    """new_subgroups(group_size=1) gives each rank a group of itself."""
    mine, every = dist.new_subgroups(group_size=1)
    expect_equal(len(every), ctx.world_size, ctx.call("new_subgroups", group_size=1))
    _check_group(ctx, mine, [ctx.rank], "new_subgroups(group_size=1)")


if hasattr(dist, "split_group"):

    @item("groups", "split_group")
    def split_group(ctx: Context) -> None:
        """split_group of the default group into the first rank and the rest: each rank's own part."""
        parts = [[0], list(range(1, ctx.world_size))]
        group = dist.split_group(split_ranks=parts)
        expect_true(group is not None, ctx.call("split_group", split_ranks=parts), "a member got None")
        _check_group(ctx, group, parts[0] if ctx.rank == 0 else parts[1], "split_group")
