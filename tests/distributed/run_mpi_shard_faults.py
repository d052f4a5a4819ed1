#!/usr/bin/env python3
"""Sharded checkpoints under faults (C14, D17), 4 ranks under `mpirun -np 4 --oversubscribe` over
libtrainwatch_mpi; TAP output. The ranks are mpi_shard_faults (its header says what each mode does).

1. SIGKILL trials, chained in one directory: each job restores the newest checkpoint (the previous
   trial's outcome, checked bit-exact on every rank), saves A, then one rank kills itself with SIGKILL
   at a point of the save of B (fault_points.h: a write, fsync or rename of a part, the index or the
   state file, before or after it; an allreduce of the save; or a random delay into it) or of the save
   at creation. After the kill the state file names A or B, B's index exists only with all its parts and
   reads whole bit-exact, and the next job restores the state file's newest on every rank alike (A when
   the index exists but the state file was not updated: B is complete, not listed, C14), and after its
   creation (which saves) finds no part without its index, no temporary file and no unlisted index.
2. A rank out of space (RLIMIT_FSIZE, SIGXFSZ ignored: write fails with EFBIG): no commit, every rank
   fails the save naming that rank and its cause, nothing of B is left, A restores on every rank. Then
   a real full disk: the job on a small tmpfs (unshare -rm; skipped where that is not allowed).
3. Two jobs in one directory: the second job (started while the first holds the directory, or both
   at once) fails on every rank with the lock's error; only the winner's values are in the checkpoints.
4. A damaged part, index or missing part of the newest checkpoint: every rank restores the previous one.

usage: run_mpi_shard_faults.py MPIRUN MPI_SHARD_FAULTS
The trials' random choices come from TW_SHARD_FAULTS_SEED (default 15, printed) so a failure reproduces.
"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

mpirun, program = sys.argv[1:3]
RANKS = 4
SEED = int(os.environ.get("TW_SHARD_FAULTS_SEED", "15"))
LINE = re.compile(r"^rank (\d+) (create|A|B|close)=(\S+)(.*?) \| (.*)$")
results = []  # (ok, name, detail)


def check(name, ok, detail=""):
    results.append((bool(ok), name, detail))


class Ranks:
    """What the ranks of one job printed: {rank: {phase: (status, fields, message)}}."""

    def __init__(self, out):
        self.out = out
        self.ranks = {}
        for line in out.splitlines():
            m = LINE.match(line)
            if m:
                fields = dict(f.split("=", 1) for f in m.group(4).split() if "=" in f)
                self.ranks.setdefault(int(m.group(1)), {})[m.group(2)] = (m.group(3), fields, m.group(5))

    def phase(self, rank, name):
        return self.ranks.get(rank, {}).get(name, (None, {}, ""))

    def created(self):
        """The step every rank restored, if all 4 created their session and agree on it; else None."""
        steps = set()
        for r in range(RANKS):
            status, fields, _ = self.phase(r, "create")
            if status != "TW_OK":
                return None
            steps.add(int(fields["restored"]))
        return steps.pop() if len(steps) == 1 else None

    def verified(self):
        return all(self.phase(r, "create")[1].get("verified") == "1" for r in range(RANKS))

    def clean(self):
        return self.phase(0, "create")[1].get("clean") == "1"

    def killed(self):
        m = re.search(r"^fault: rank (\d+) killed at (\S+)$", self.out, re.M)
        return (int(m.group(1)), m.group(2)) if m else None


MPIRUN = [mpirun, "-np", str(RANKS), "--oversubscribe", "--bind-to", "none", program]


class Job(Ranks):
    """One mpirun of the ranks with `args`; wait=False starts it, wait() ends it."""

    def __init__(self, args, limit=120, wait=True):
        self.process = subprocess.Popen(MPIRUN + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.limit = limit
        super().__init__("")
        if wait:
            self.wait()

    def wait(self):
        try:
            out, _ = self.process.communicate(timeout=self.limit)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out = self.process.communicate()[0] + f"\nmpirun did not finish within {self.limit} s"
        super().__init__(out)
        return self


def newest_in_state_file(directory):
    try:
        with open(os.path.join(directory, "checkpoint"), encoding="utf-8") as f:
            m = re.search(r'^model_checkpoint_path: ".*-(\d+)"$', f.read(), re.M)
        return int(m.group(1)) if m else None
    except OSError:
        return None


def index_path(directory, step):
    return os.path.join(directory, f"model.ckpt-{step}")


def part_paths(directory, step):
    return [f"{index_path(directory, step)}.part-{p:05d}-of-{RANKS:05d}" for p in range(RANKS)]


def inspect(directory, step, model=1):
    """(verify status, whole tensors match MODEL's values of STEP) for the checkpoint of STEP."""
    out = subprocess.run([program, "inspect", directory, str(step), str(model)], capture_output=True, text=True,
                         timeout=60).stdout
    m = re.search(r"verify=(\S+) match=(\d)", out)
    return (m.group(1), m.group(2) == "1") if m else (out, False)


def indexes_have_their_parts(directory):
    """Every index of the directory has all its parts (a checkpoint exists only complete)."""
    missing = []
    for name in os.listdir(directory):
        if re.fullmatch(r"model\.ckpt-\d+", name):
            missing += [p for p in part_paths(directory, int(name.split("-")[1])) if not os.path.exists(p)]
    return missing


def listing(directory):
    """The checkpoint files of the directory (not its event files), for diagnostics."""
    return " ".join(sorted(n for n in os.listdir(directory) if not n.startswith("events.")))


# --- 1. SIGKILL trials -------------------------------------------------------------------------------

# Kill points of the save of B on any rank: in its part's writing, around the allreduces of the save
# (1: preparing, 2: the vote, 3: hearing the commit, 4: the run's own vote after it).
ANY_RANK = ["write:part:before:1", "write:part:after:1", "fsync:part:before:1", "fsync:part:after:1",
            "rename:part:before:1", "rename:part:after:1", "fsync:dir:after:1",
            "allreduce:any:before:1", "allreduce:any:after:1", "allreduce:any:before:2", "allreduce:any:after:2",
            "allreduce:any:before:3", "allreduce:any:after:3", "allreduce:any:before:4"]
# The chief's commit: the index, then the state file (each: write, fsync, rename, fsync of the directory).
CHIEF = ["write:index:before:1", "write:index:after:1", "fsync:index:after:1", "rename:index:before:1",
         "rename:index:after:1", "fsync:dir:after:2", "write:state:before:1", "fsync:state:after:1",
         "rename:state:before:1", "rename:state:after:1"]
# The save at creation rewrites the restored step: a kill there must not lose it.
CREATION = [(None, "creation/rename:part:after:1"), (0, "creation/rename:index:before:1"),
            (0, "creation/rename:state:after:1")]
DELAYS = 10

rng = random.Random(SEED)
trials = [(rng.randrange(RANKS), p) for p in ANY_RANK] + [(0, p) for p in CHIEF]
trials += [(rng.randrange(1, RANKS) if v is None else v, p) for v, p in CREATION]
trials += [(rng.randrange(RANKS), f"delay:{rng.uniform(0.0, 1.5):.3f}") for _ in range(DELAYS)]
rng.shuffle(trials)

directory = tempfile.mkdtemp(prefix="tw_shard_kill_")
expected = {0}  # what the next job must restore: a fresh directory initializes
pending = None  # (name, detail) of the previous trial, judged by the next job's restore
started = time.monotonic()
for number, (victim, point) in enumerate(trials + [(-1, "none")], 1):
    # A job killed in its creation cannot say what it restored: a restore-only job says it first.
    judge = Job(["restore", directory]) if point.startswith("creation/") else None
    job = Job(["trial", directory, str(victim), point])
    judge = judge or job
    restored = judge.created()
    clean = judge is not job or job.clean()  # a restore-only job cleans nothing; the next trial's job does
    problems = []
    if restored is None or restored not in expected or not judge.verified() or not clean:
        problems.append(f"the next job restored {restored} (expected one of {sorted(expected)}), verified on "
                        f"every rank {judge.verified()}, clean {job.clean()}:\n{judge.out}")
    if pending is not None:
        check(pending[0], not problems, "\n".join([pending[1]] + problems))
    if point == "none":  # the last job only judges the last trial, and must itself succeed
        check("after the trials a job saves A and B on every rank",
              all(job.phase(r, p)[0] == "TW_OK" for r in range(RANKS) for p in ("A", "B", "close")), job.out)
        break
    creation = point.startswith("creation/")
    if creation:  # killed during creation: the steps it may have restored, and re-saved
        candidates, what = set(expected), f"re-saving {'/'.join(map(str, sorted(expected)))} at creation"
    else:
        a = (restored if restored is not None else max(expected)) + 1
        b = a + 1
        candidates, what = {a, b}, f"A={a}, B={b}"
    killed = job.killed()
    newest = newest_in_state_file(directory)
    problems = []
    if not point.startswith("delay:") and killed != (victim, point.split("/")[-1]):
        problems.append(f"the kill point was not reached (killed: {killed})")
    if newest not in candidates:
        problems.append(f"the state file names step {newest}, not one of {sorted(candidates)}")
    missing = indexes_have_their_parts(directory)
    if missing:
        problems.append(f"an index without its parts: {missing}")
    # Restored next: the state file's newest (C8, D16), even when a newer complete checkpoint is there
    # unlisted (C14), which must read whole too — and be gone after the next job's creation (clean).
    unlisted = [c for c in candidates if newest is not None and c > newest and os.path.exists(index_path(directory, c))]
    expected = {newest}
    for step in sorted(expected | set(unlisted), key=lambda s: -1 if s is None else s):
        verify, match = inspect(directory, step) if step is not None else ("no state file", False)
        if verify != "TW_OK" or not match:
            problems.append(f"checkpoint {step} reads whole: verify {verify}, bit-exact {match}")
    if creation:
        outcome = f"the state file names {newest}"
    else:
        outcome = "B committed" if newest == b else ("B complete, not listed" if unlisted else "B not committed")
    name = (f"SIGKILL trial {number}: rank {victim} at {point} ({what}): {outcome}; the next job restores "
            f"{newest} bit-exact on every rank, nothing stale or unlisted after its first save")
    detail = "\n".join(problems + [f"seed {SEED}; files after the kill: {listing(directory)}", job.out])
    if problems:
        check(name, False, detail)
        pending = None
    else:
        pending = (name, detail)
kill_secs = time.monotonic() - started
shutil.rmtree(directory, ignore_errors=True)

# --- 2. A rank out of space ------------------------------------------------------------------------

for victim in (2, 0):
    directory = tempfile.mkdtemp(prefix="tw_shard_enospc_")
    job = Job(["enospc", directory, str(victim), "16384"])  # a part is about 64 KiB
    files = listing(directory)
    after = Job(["restore", directory])
    failed = [job.phase(r, "B") for r in range(RANKS)]
    verify, match = inspect(directory, 1)
    check(f"ENOSPC (RLIMIT_FSIZE) on rank {victim} during the save of step 2: every rank fails it with "
          f"TW_RESOURCE_EXHAUSTED naming rank {victim} and its cause; nothing of step 2 is left; step 1 restores on "
          "every rank",
          all(job.phase(r, "A")[0] == "TW_OK" for r in range(RANKS)) and
          all(s == "TW_RESOURCE_EXHAUSTED" and f"rank(s) {victim} failed to write their part" in m and
              f"rank {victim}: Saving part" in m and "File too large" in m for s, _, m in failed) and
          newest_in_state_file(directory) == 1 and not any(n.startswith("model.ckpt-2") or ".tw-tmp-" in n
                                                           for n in os.listdir(directory)) and
          verify == "TW_OK" and match and after.created() == 1 and after.verified(),
          f"files: {files}\n{job.out}\n{after.out}")
    shutil.rmtree(directory, ignore_errors=True)

# A disk that fills up: the whole job on a small tmpfs (a mount namespace of its own, where user
# namespaces allow one), room for two checkpoints and a bit: every rank whose part does not fit fails
# with ENOSPC, the save fails on every rank naming them, and step 1 restores.
directory = tempfile.mkdtemp(prefix="tw_shard_tmpfs_")
script = ('mount -t tmpfs -o size=640k tmpfs "$1" || exit 97; shift; dir=$1; shift; '
          '"$@" enospc "$dir" -1 0; echo "=== restore"; "$@" restore "$dir"; ls -a "$dir" | sed "s/^/file: /"')
try:
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", directory, directory] + MPIRUN,
                          capture_output=True, text=True, timeout=240)
    code, out = done.returncode, done.stdout + done.stderr
except (OSError, subprocess.TimeoutExpired) as error:
    code, out = 97, str(error)
name = ("a full disk (a 640 KiB tmpfs) during the save of step 2: every rank fails it with TW_RESOURCE_EXHAUSTED "
        "naming the ranks out of space and the cause; nothing of step 2 is left; step 1 restores on every rank")
if code == 97:
    results.append((True, name + " # SKIP no tmpfs can be mounted here (unshare -rm)", out))
else:
    saving, restoring = (out.split("=== restore", 1) + [""])[:2]
    saved, restored = Ranks(saving), Ranks(restoring)
    files = re.findall(r"^file: (.*)$", out, re.M)
    failed = [saved.phase(r, "B") for r in range(RANKS)]
    check(name, all(saved.phase(r, "A")[0] == "TW_OK" for r in range(RANKS)) and
          all(st == "TW_RESOURCE_EXHAUSTED" and "failed to write their part" in m and "No space left on device" in m
              for st, _, m in failed) and
          not any(n.startswith("model.ckpt-2") or ".tw-tmp-" in n for n in files) and "model.ckpt-1" in files and
          restored.created() == 1 and restored.verified(), out)
shutil.rmtree(directory, ignore_errors=True)

# --- 3. Two jobs in one directory --------------------------------------------------------------------


def two_jobs(together):
    """Jobs of models 1 and 2 in one directory; returns (winner, loser) Jobs or None with the output."""
    directory = tempfile.mkdtemp(prefix="tw_shard_two_")
    signals = tempfile.mkdtemp(prefix="tw_shard_two_signals_")
    go = os.path.join(signals, "go")
    ready = [os.path.join(signals, f"ready{model}") for model in (1, 2)]
    jobs = [Job(["hold", directory, "1", ready[0], go], wait=False)]
    if not together:  # the second starts once the first holds the directory
        deadline = time.monotonic() + 60
        while not os.path.exists(ready[0]) and time.monotonic() < deadline and jobs[0].process.poll() is None:
            time.sleep(0.02)
    jobs.append(Job(["hold", directory, "2", ready[1], go], wait=False))
    # The loser ends by itself; then the winner may go on.
    deadline = time.monotonic() + 90
    while all(j.process.poll() is None for j in jobs) and time.monotonic() < deadline:
        time.sleep(0.02)
    open(go, "w").close()
    for j in jobs:
        j.wait()
    created = [j.created() is not None for j in jobs]
    detail = "\n".join(j.out for j in jobs)
    winner = created.index(True) + 1 if created.count(True) == 1 else None
    ok = winner is not None and (together or winner == 1)
    if ok:
        loser = jobs[2 - winner]
        ok = all(loser.phase(r, "create")[0] == "TW_FAILED_PRECONDITION" and
                 "rank 0 of 4: checkpoint directory" in loser.phase(r, "create")[2] and
                 "is in use" in loser.phase(r, "create")[2] for r in range(RANKS))
        ok = ok and all(jobs[winner - 1].phase(r, p)[0] == "TW_OK" for r in range(RANKS) for p in ("A", "B"))
        steps = sorted(int(n.split("-")[1]) for n in os.listdir(directory) if re.fullmatch(r"model\.ckpt-\d+", n))
        reads = [inspect(directory, s, winner) for s in steps]
        ok = ok and steps == [0, 1, 2] and all(v == "TW_OK" and m for v, m in reads) and \
            newest_in_state_file(directory) == 2 and not indexes_have_their_parts(directory)
        detail = f"winner model {winner}, steps {steps}, reads {reads}\n{detail}"
    shutil.rmtree(directory, ignore_errors=True)
    shutil.rmtree(signals, ignore_errors=True)
    return ok, detail


ok, detail = two_jobs(together=False)
check("two jobs, one directory: the second job fails on every rank with the directory lock's error; the "
      "checkpoints hold only the first job's values", ok, detail)
ok, detail = two_jobs(together=True)
check("two jobs started together in one directory: exactly one runs, the other fails on every rank with the "
      "lock's error; the checkpoints hold only the winner's values", ok, detail)

# --- 4. A damaged newest checkpoint ------------------------------------------------------------------

directory = tempfile.mkdtemp(prefix="tw_shard_damaged_")
setup = Job(["trial", directory, "-1", "none"])  # steps 0, 1 and 2 committed
check("setup: a job commits steps 0, 1 and 2", newest_in_state_file(directory) == 2 and
      all(setup.phase(r, "B")[0] == "TW_OK" for r in range(RANKS)), setup.out)


def flip_middle(path):
    with open(path, "r+b") as f:
        f.seek(os.path.getsize(path) // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0x40]))


def truncate(path):
    os.truncate(path, os.path.getsize(path) - 100)


DAMAGES = [("a flipped byte inside part 2 (its size and footer unchanged)", 2, flip_middle),
           ("a flipped byte inside part 0, the chief's", 0, flip_middle),
           ("part 1 truncated", 1, truncate),
           ("part 3 missing", 3, os.remove),
           ("a flipped byte inside the index", None, flip_middle)]
for what, part, damage in DAMAGES:
    path = index_path(directory, 2) if part is None else part_paths(directory, 2)[part]
    backup = path + ".backup"
    shutil.copyfile(path, backup)
    damage(path)
    job = Job(["restore", directory])
    os.replace(backup, path)
    check(f"{what} of the newest checkpoint (step 2): every rank restores step 1 together, bit-exact",
          job.created() == 1 and job.verified(), job.out)
shutil.rmtree(directory, ignore_errors=True)

print(f"# seed {SEED}; {len(trials)} SIGKILL trials took {kill_secs:.1f} s")
print(f"1..{len(results)}")
for i, (ok, name, detail) in enumerate(results, 1):
    print(f"{'ok' if ok else 'not ok'} {i} - {name}")
    if not ok:
        for line in str(detail).splitlines()[:80]:
            print(f"# {line}")
sys.exit(0 if all(ok for ok, _, _ in results) else 1)
