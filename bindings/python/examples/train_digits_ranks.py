"""The digits training of train_digits.py as one data-parallel job of N ranks: `bash tools/demo --ranks 4`.

Each rank is a process (torch.multiprocessing), the ranks talk over torch.distributed with Gloo on
127.0.0.1, and DistributedDataParallel averages the gradients of each rank's own slice of the data.
Every rank runs a MonitoredTrainingSession with a trainwatch.distributed.TorchCollective: rank 0 is the
chief (it writes checkpoints and summaries), and after every run the ranks vote, so that they stop,
roll back and recover together.

One learning-rate spike is injected on one rank only. That rank's weights blow up; the next step's
gradient average spreads the damage, and that rank's NanTensorHook sees the non-finite loss. Alone, it
would roll back while the others carry on with ruined weights (or wait forever in their next
allreduce); with the vote every rank rolls back to the same checkpoint in the same run. At the end the
ranks compare their weights: the job fails unless all N hold exactly the same ones and the held-out
accuracy is at least 90%.

usage: train_digits_ranks.py [--ranks N] [--checkpoint-dir DIR] [--steps N] [--spike-rank R] [--fresh]
"""
import argparse
import datetime
import hashlib
import logging
import os
import pathlib
import shutil
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import train_digits  # noqa: E402  (the model, its data and the step, shared with the single-process demo)

import trainwatch as tw  # noqa: E402
from trainwatch.distributed import TorchCollective  # noqa: E402

COLLECTIVE_TIMEOUT_SECS = 60.0


class RankTrainer(train_digits.Trainer):
    """train_digits.Trainer whose model is wrapped in DDP and whose batches are this rank's slice."""

    def __init__(self, rank, world_size):
        super().__init__()  # the same seed everywhere: every rank starts from the same weights
        self.rank, self.world_size = rank, world_size
        self.plain_model = self.model  # what checkpoints hold (DDP's own names carry a "module." prefix)
        self.model = torch.nn.parallel.DistributedDataParallel(self.plain_model)

    def variables(self):
        return dict(self.plain_model.named_parameters())

    def batch(self, step):
        return super().batch(step * self.world_size + self.rank)

    def evaluate(self, ctx):
        with torch.no_grad():
            return float((self.plain_model(self.test_x).argmax(1) == self.test_y).float().mean())

    def fingerprint(self):
        digest = hashlib.sha256()
        for name, parameter in sorted(self.variables().items()):
            digest.update(name.encode())
            digest.update(parameter.detach().numpy().tobytes())
        return digest.hexdigest()


def rank_main(rank, world_size, port, args):
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s rank {rank} %(levelname)s %(message)s",
                        datefmt="%H:%M:%S")
    logging.getLogger("trainwatch").addFilter(lambda record: "checkpoint listeners" not in record.getMessage())
    if rank != 0:  # one rank's progress is enough to read; warnings (the rollback) come from every rank
        logging.getLogger("train_digits").setLevel(logging.WARNING)
        logging.getLogger("trainwatch").setLevel(logging.WARNING)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=COLLECTIVE_TIMEOUT_SECS))
    collective = TorchCollective()
    trainer = RankTrainer(rank, world_size)
    hooks = [tw.NanTensorHook("loss", action="rollback", max_rollbacks=3),
             tw.StopAtStepHook(num_steps=args.steps),
             train_digits.Progress()]
    with tw.MonitoredTrainingSession(checkpoint_dir=args.checkpoint_dir, save_checkpoint_steps=50,
                                     save_summaries_steps=25, log_step_count_steps=200,
                                     variables=trainer.variables(), hooks=hooks, collective=collective,
                                     collective_timeout_secs=COLLECTIVE_TIMEOUT_SECS) as sess:
        start = sess.global_step
        if rank == args.spike_rank:
            trainer.spike_at = start + args.steps * 6 // 10 + 7
        while not sess.should_stop():
            sess.run(trainer.step, feed_dict=trainer.batch(sess.global_step))
        accuracy = sess.run_without_hooks(trainer.evaluate)
        final = sess.global_step
    fingerprints = [None] * world_size
    dist.all_gather_object(fingerprints, (trainer.fingerprint(), final))
    dist.destroy_process_group()
    if rank != 0:
        return
    log = logging.getLogger("train_digits")
    log.info("trained global steps %d → %d on %d ranks; held-out accuracy %.3f", start, final, world_size, accuracy)
    for other, (fingerprint, step) in enumerate(fingerprints):
        log.info("rank %d: global step %d, weights sha256 %s", other, step, fingerprint[:16])
    if len(set(fingerprints)) != 1:
        raise SystemExit("the ranks finished with different weights")
    log.info("all %d ranks finished at the same step with the same weights", world_size)
    log.info("latest checkpoint %s; run again to resume from it", tw.latest_checkpoint(args.checkpoint_dir))
    if accuracy < 0.9:
        raise SystemExit(f"held-out accuracy {accuracy:.3f} is below 0.9")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--checkpoint-dir", default="build-demo/train_digits_ranks")
    parser.add_argument("--steps", type=int, default=400, help="steps to train in this invocation")
    parser.add_argument("--spike-rank", type=int, default=2, help="the rank whose step spikes (-1: none)")
    parser.add_argument("--fresh", action="store_true", help="delete the checkpoint directory first")
    args = parser.parse_args(argv)
    if args.fresh:
        shutil.rmtree(args.checkpoint_dir, ignore_errors=True)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.multiprocessing.spawn(rank_main, args=(args.ranks, free_port(), args), nprocs=args.ranks, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
