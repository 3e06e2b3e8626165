"""Shared pieces for the backend-specific ``test_c10d_spawn_*`` files; defines no tests.

* :class:`AbstractProcessGroupShareTensorTest`: a mixin whose helpers start ranks with the
  ``spawn`` start method, hand them tensors to use in a collective and check what each rank
  received.
* :class:`TestDistributedNNFunctions`: the base of the ``torch.distributed.nn`` autograd
  collective tests. Its ``_test_*`` helpers take the backend to use; a backend's file adds the
  ``test_*`` methods that call them.

Importing this module exits the process (status 0) when c10d or the ``spawn`` start method is
unavailable, as the files that import it cannot run then either.
"""

import os
import sys
import tempfile

import torch
import torch.distributed as c10d
import torch.multiprocessing as mp

try:
    import torch.distributed.nn

    _torch_dist_nn_available = True
except ImportError:
    _torch_dist_nn_available = False

from torch_testing_ext.common_distributed import MultiProcessTestCase
from torch_testing_ext.common_utils import (
    NO_MULTIPROCESSING_SPAWN,
    load_tests,  # noqa: F401  (unittest's sharding hook, found by name)
    run_tests,
)

if not c10d.is_available():
    print("c10d not available, skipping tests", file=sys.stderr)
    sys.exit(0)

if NO_MULTIPROCESSING_SPAWN:
    print("spawn not available, skipping tests", file=sys.stderr)
    sys.exit(0)


class AbstractProcessGroupShareTensorTest:
    """Mixin for a TestCase: run a collective on tensors created in the parent process.

    A backend's test passes ``_test_multiprocess`` one of the ``_test_*_process`` classmethods
    (classmethods, because ``spawn`` pickles its target and a TestCase instance does not
    pickle), the tensors to share, a function ``init_pg(rank, filename, world_size)`` returning
    a process group, and the number of results each rank reports.
    """

    world_size = 2

    def _test_multiprocess(self, f, shared_tensors, init_pg, n_output):
        ws = self.world_size
        with tempfile.NamedTemporaryFile(delete=False) as store_file:
            file_name = store_file.name
        ctx = mp.get_context("spawn")
        to_parent = ctx.Queue(2)
        to_children = ctx.Queue(2)
        processes = []
        try:
            for rank in range(ws):
                process = ctx.Process(
                    target=f,
                    args=(rank, file_name, shared_tensors, ws, init_pg, to_parent, to_children),
                )
                process.start()
                processes.append(process)

            for _ in range(ws * n_output):
                pid, expected, result = to_parent.get()
                self.assertEqual(
                    expected,
                    result,
                    msg=f"Expect rank {pid} to receive tensor {expected} but got {result}.",
                )
        finally:
            # Release the children (they wait so that the shared tensors outlive the checks),
            # also when a check failed; none may outlive the test, nor may the store file.
            for _ in processes:
                to_children.put(0)
            for process in processes:
                process.join(2)
                if process.is_alive():
                    process.kill()
                    process.join()
            try:
                os.remove(file_name)
            except OSError:
                pass

    @classmethod
    def _test_broadcast_process(cls, rank, filename, shared_tensors, world_size, init_pg, c2p, p2c):
        pg = init_pg(rank, filename, world_size)
        xs = [shared_tensors[rank]]
        pg.broadcast(xs).wait()
        c2p.put((rank, torch.zeros(2, 2), xs[0].to("cpu")))
        p2c.get()

    @classmethod
    def _test_allreduce_process(cls, rank, filename, shared_tensors, world_size, init_pg, c2p, p2c):
        pg = init_pg(rank, filename, world_size)
        xs = [shared_tensors[rank]]
        pg.allreduce(xs, op=c10d.ReduceOp.SUM).wait()
        c2p.put((rank, torch.ones(2, 2) * 2, xs[0].to("cpu")))
        p2c.get()

    @classmethod
    def _test_allgather_process(cls, rank, filename, shared_tensors, world_size, init_pg, c2p, p2c):
        pg = init_pg(rank, filename, world_size)
        xs = [shared_tensors[rank]]
        ys = [[torch.zeros_like(xs[0]) for _ in range(world_size)]]
        pg.allgather(ys, xs).wait()
        for i in range(world_size):
            c2p.put((rank, torch.ones(2, 2) * i, ys[0][i].to("cpu")))
        p2c.get()


class TestDistributedNNFunctions(MultiProcessTestCase):
    """Base of the ``torch.distributed.nn`` tests: values and gradients of each autograd
    collective on 2 ranks. Each rank's tensors live on ``self.device``."""

    def setUp(self):
        super().setUp()
        self._spawn_processes()

    def tearDown(self):
        super().tearDown()
        try:
            os.remove(self.file_name)
        except OSError:
            pass

    @property
    def op_timeout_sec(self):
        return 1

    @property
    def world_size(self):
        return 2

    def _init_process_group(self, backend):
        store = c10d.FileStore(self.file_name, self.world_size)
        c10d.init_process_group(store=store, rank=self.rank, world_size=self.world_size,
                                backend=backend)

    def _init_with_rank_tensor(self, backend):
        """Join a ``backend`` group; return this rank's ``ones(5, 5) + rank`` (requires grad)."""
        self._init_process_group(backend)
        x = torch.ones(5, 5, device=self.device) + self.rank
        x.requires_grad = True
        return x

    def _test_broadcast(self, backend):
        x = self._init_with_rank_tensor(backend)
        device = x.device
        y = torch.distributed.nn.broadcast(x, 1)
        self.assertEqual(y, 1 + torch.ones(5, 5))
        y.sin().sum().backward()
        # The gradient flows back to the source only, summed over both ranks.
        if self.rank == 1:
            self.assertEqual(x.grad, 2 * torch.cos(x))
        elif self.rank == 0:
            self.assertEqual(x.grad, torch.zeros(5, 5, device=device))

    def _test_reduce(self, backend):
        x = self._init_with_rank_tensor(backend)
        device = x.device
        y = torch.distributed.nn.reduce(x, 1, op=c10d.ReduceOp.SUM)
        if self.rank == 1:
            self.assertEqual(y, 3 * torch.ones(5, 5, device=device))
        y.sin().sum().backward()
        # The destination's gradient is broadcast to every contributor.
        x_s = 3 * torch.ones(5, 5, device=device)
        self.assertEqual(x.grad, x_s.cos())

    def _test_allreduce(self, backend):
        x = self._init_with_rank_tensor(backend)
        device = x.device
        y = torch.distributed.nn.all_reduce(x, op=c10d.ReduceOp.SUM)
        self.assertEqual(y, 3 * torch.ones(5, 5, device=device))
        y.sin().sum().backward()
        x_s = 3 * torch.ones(5, 5, device=device)
        self.assertEqual(x.grad, 2 * x_s.cos())

    def _test_all_gather(self, backend):
        x = self._init_with_rank_tensor(backend)
        device = x.device
        tensors = torch.distributed.nn.all_gather(x)
        for i, t in enumerate(tensors):
            self.assertEqual(t, torch.ones(5, 5, device=device) + i)
        y = torch.sum(torch.stack(tensors), dim=0)
        y.sin().sum().backward()
        x_s = 3 * torch.ones(5, 5, device=device)
        self.assertEqual(x.grad, 2 * x_s.cos())

    def _test_all_to_all(self, backend):
        self._init_process_group(backend)
        device = torch.device(self.device)
        x0 = torch.ones(5, 5, device=device) + 2 * self.rank
        x1 = torch.ones(5, 5, device=device) + 2 * self.rank
        x0.requires_grad = True
        x1.requires_grad = True
        y0 = torch.empty_like(x0)
        y1 = torch.empty_like(x1)
        tensors = torch.distributed.nn.all_to_all([y0, y1], [x0, x1])
        for i, t in enumerate(tensors):
            self.assertEqual(t, torch.ones(5, 5, device=device) + 2 * i)
        y = torch.sum(torch.stack(tensors), dim=0)
        y.sin().sum().backward()
        x_s = 4 * torch.ones(5, 5, device=device)
        self.assertEqual(x0.grad, x_s.cos())
        self.assertEqual(x1.grad, x_s.cos())

    def _test_all_to_all_single(self, backend):
        self._init_process_group(backend)
        device = torch.device(self.device)
        # Rank r holds world_size * (r + 1) * (world_size + 1) / 2 rows: 3 on rank 0, 6 on rank 1.
        row = self.world_size * (self.rank + 1) * (self.world_size + 1) / 2
        x = torch.ones(int(row), 5, device=device) * (self.rank + 1)
        x.requires_grad = True
        y = torch.empty_like(x)
        # Chunk i has (i + 1) * (rank + 1) rows; the sizes are symmetric, so they serve as
        # both the input and the output split sizes.
        split_sizes = [(i + 1) * (self.rank + 1) for i in range(self.world_size)]
        y = torch.distributed.nn.all_to_all_single(
            y, x, output_split_sizes=split_sizes, input_split_sizes=split_sizes
        )
        # Chunk idx comes from rank idx, whose tensor is all (idx + 1).
        expected = torch.cat([torch.full_like(chunk, idx + 1)
                              for idx, chunk in enumerate(x.split(split_sizes))])
        self.assertEqual(y, expected)
        y.sin().sum().backward()
        x_s = ((self.rank + 1) * torch.ones(int(row), 5, device=device)).cos()
        self.assertEqual(x.grad, x_s)


if __name__ == "__main__":
    run_tests()
