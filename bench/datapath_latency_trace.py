#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Per-I/O latency breakdown from bench/datapath_latency_trace.sh's traces.

Reads each side directory (kernel/, datapath/) that `testbed run --out` wrote:
rows.txt, meta-CONFIG.txt and trace-CONFIG.txt (tracefs text, trace clock
mono). Pairs the events of each fio read along its way and prints, per
configuration, the mean, p50 and p90 of every segment, the wake-up waits of
the datapath's queue thread and of fio, and what tracing cost.

Pairing keys (all FIFO per key, in trace order):
  fio's io_uring request pointer: io_uring_submit_req -> io_uring_complete
  the fio pid: io_uring_submit_req -> the next block_bio_queue (sector)
  sector: block_bio_queue -> block_rq_issue -> nvme_setup_cmd (slba) ->
          block_rq_complete / block_bio_complete
  the ublk tag: FETCH CQE (user_data = tag) -> passthru submit and CQE
          (tag in the low 16 bits of user_data) -> COMMIT (user_data = tag),
          whose block_rq_complete in the same thread names the sector
  (ctrl, qid, cid): nvme_setup_cmd -> nvme_complete_rq
  (qid, cid, slba): nvme_setup_cmd -> nvmet_req_init -> nvmet_req_complete
"""

import collections
import glob
import os
import re
import statistics
import sys

LINE = re.compile(
    r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+"
    r"(?P<ts>\d+\.\d+): (?P<ev>\w+): (?P<rest>.*)$")
RQ_ISSUE = re.compile(r"^(\d+),(\d+) (\S+) (\d+) \((.*?)\) (\d+) \+ (\d+)")
RQ_DONE = re.compile(r"^(\d+),(\d+) (\S+) \((.*?)\) (\d+) \+ (\d+)")
BIO = re.compile(r"^(\d+),(\d+) (\S+) (\d+) \+ (\d+)")
NVME_SETUP = re.compile(
    r"^nvme(\d+): (?:disk=\S+, )?qid=(\d+), cmdid=(\d+), .*?cmd=\((\w+),? ?(.*)\)")
NVME_DONE = re.compile(r"^nvme(\d+): (?:disk=\S+, )?qid=(\d+), cmdid=(\d+), .*status=(\S+)")
NVMET = re.compile(r"^nvmet(\S*?): (?:disk=\S+, )?qid=(\d+), cmdid=(\d+),")
SLBA = re.compile(r"slba=(\d+)")
URING = re.compile(r"ring (\S+), req (\S+), user_data 0x([0-9a-f]+)")
OPCODE = re.compile(r"opcode (\S+?),")
WAKING = re.compile(r"comm=(.*) pid=(\d+) prio=\d+ target_cpu=(\d+)")
SWITCH = re.compile(r"prev_comm=(.*) prev_pid=(\d+) .* ==> next_comm=(.*) next_pid=(\d+)")
IDLE = re.compile(r"state=(\d+) cpu_id=(\d+)")
IPI_CPU = re.compile(r"cpu=(\d+) ")
IPI_MASK = re.compile(r"cpumask=([0-9,-]+) ")

BACKEND_BIT = 1 << 63


def pct(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    k = (len(s) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


class Io:
    __slots__ = ("t", "sector", "ring", "req", "tag", "nvme_key")

    def __init__(self):
        self.t = {}
        self.sector = None
        self.ring = self.req = None
        self.tag = None
        self.nvme_key = None


def read_meta(path):
    meta = {"nvmedisk": {}, "server_threads": {}, "dev": None}
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "dev":
                meta["dev"] = (w[1], w[2])
            elif w[0] == "nvmedisk":
                meta["nvmedisk"][w[2]] = (w[1], int(w[3]))
            elif w[0] == "server_thread":
                meta["server_threads"][int(w[1])] = w[2]
            elif w[0] in ("side", "config"):
                meta[w[0]] = w[1]
    return meta


class Trace:
    """One traced run: every fio read's timestamps (us) along its way."""

    def __init__(self, meta):
        self.meta = meta
        self.side = meta.get("side")
        self.dev = meta["dev"][1]  # "major:minor" of fio's device
        self.lbs = {d: v[1] for d, v in meta["nvmedisk"].items()}
        self.server_tids = set(meta["server_threads"])
        # The kernel side's per-path disks (where the head remaps bios to).
        self.path_devs = {d for d in self.lbs if d != self.dev}
        self.done = []
        self.events = 0
        self.first_ts = self.last_ts = None
        # Pairing state.
        self.fio_rings = set()
        self.server_rings = set()
        self.by_req = {}
        self.fio_wait_bio = {}  # pid -> Io
        self.by_sector = collections.defaultdict(list)  # sector -> [Io] in flight
        # (ring, tag) -> the tag's current request: its FETCH CQE, passthru
        # submission and CQE (the sector is learnt at COMMIT).
        self.tags = {}
        self.commit_wait = {}  # server pid -> ((ring, tag), ts of the COMMIT)
        self.nvme_out = {}  # (ctrl, qid, cid) -> Io
        self.tgt_wait = collections.defaultdict(collections.deque)  # (qid, cid, slba)
        self.tgt_out = {}
        # Scheduling.
        self.waking = {}  # pid -> (ts, waker cpu, target cpu)
        self.wakes = collections.defaultdict(list)  # pid -> [(waking, switch_in, cross)]
        self.idle_since = {}  # cpu -> ts
        self.ipi_pending = collections.defaultdict(list)  # cpu -> [ts]
        self.ipi_to_exit = []  # us from an IPI to an idle CPU to its idle exit
        self.idle_exits = 0
        self.on_cpu_since = {}
        self.server_on_cpu = 0.0
        self.server_switch_ins = 0
        # (wakee, waker, same/another CPU) -> [waking -> running, us]
        self.wake_pairs = collections.defaultdict(list)

    def in_flight(self, sector, need, lacks):
        for io in self.by_sector.get(sector, ()):
            if need in io.t and lacks not in io.t:
                return io
        return None

    def finish(self, io):
        lst = self.by_sector.get(io.sector)
        if lst and io in lst:
            lst.remove(io)
            if not lst:
                del self.by_sector[io.sector]
        self.done.append(io)

    def feed(self, line):
        m = LINE.match(line)
        if not m:
            return
        self.events += 1
        comm, pid, cpu = m["comm"], int(m["pid"]), int(m["cpu"])
        ts = float(m["ts"]) * 1e6
        if self.first_ts is None:
            self.first_ts = ts
        self.last_ts = ts
        ev, rest = m["ev"], m["rest"]
        h = getattr(self, "on_" + ev, None)
        if h:
            h(comm, pid, cpu, ts, rest)

    # -- io_uring
    def on_io_uring_submit_req(self, comm, pid, cpu, ts, rest):
        u = URING.search(rest)
        if not u:
            return
        ring, req, ud = u[1], u[2], int(u[3], 16)
        op = OPCODE.search(rest)
        op = op[1] if op else ""
        if pid in self.server_tids or comm.startswith("pw-ublk"):
            self.server_rings.add(ring)
            if ud & BACKEND_BIT:
                if (ud >> 60) & 3 == 0:  # a passthru I/O; its first try counts
                    rec = self.tags.setdefault((ring, ud & 0xFFFF), {})
                    if "pt_submit" not in rec:
                        rec["pt_submit"] = ts
                        rec["ud"] = ud
            elif ud < 0x10000:
                # COMMIT: ublk completes the request inside this submission,
                # so the next block_rq_complete of this thread is its own.
                self.commit_wait[pid] = ((ring, ud), ts)
            return
        if comm == "fio" and op.upper() in ("READ", "READV", "READ_FIXED"):
            self.fio_rings.add(ring)
            io = Io()
            io.ring, io.req = ring, req
            io.t["submit"] = ts
            self.by_req[(ring, req)] = io
            self.fio_wait_bio[pid] = io

    def on_io_uring_complete(self, comm, pid, cpu, ts, rest):
        u = URING.search(rest)
        if not u:
            return
        ring, req, ud = u[1], u[2], int(u[3], 16)
        if ring in self.fio_rings:
            io = self.by_req.pop((ring, req), None)
            if io is not None and "bio" in io.t:
                io.t["fio_cqe"] = ts
                self.finish(io)
            return
        if ring in self.server_rings or pid in self.server_tids:
            if ud < 0x10000:
                # A FETCH (or COMMIT_AND_FETCH) answered: a new request on
                # this tag.
                self.tags[(ring, ud)] = {"fetch_cqe": ts}
            elif ud & BACKEND_BIT and ((ud >> 60) & 3) == 0:
                rec = self.tags.get((ring, ud & 0xFFFF))
                if rec is not None and rec.get("ud") == ud:
                    rec.setdefault("pt_cqe", ts)

    # -- block
    def on_block_bio_queue(self, comm, pid, cpu, ts, rest):
        b = BIO.match(rest)
        if not b or f"{b[1]}:{b[2]}" != self.dev:
            return
        io = self.fio_wait_bio.pop(pid, None)
        if io is None:
            return
        io.sector = int(b[4])
        io.t["bio"] = ts
        self.by_sector[io.sector].append(io)

    def on_block_rq_issue(self, comm, pid, cpu, ts, rest):
        b = RQ_ISSUE.match(rest)
        if not b:
            return
        dev, sector = f"{b[1]}:{b[2]}", int(b[6])
        if dev == self.dev or (self.side == "kernel" and dev in self.path_devs):
            io = self.in_flight(sector, "bio", "rq_issue")
            if io is not None:
                io.t["rq_issue"] = ts

    def on_block_rq_complete(self, comm, pid, cpu, ts, rest):
        b = RQ_DONE.match(rest)
        if not b:
            return
        dev, sector = f"{b[1]}:{b[2]}", int(b[5])
        if dev == self.dev and self.side == "datapath":
            io = self.in_flight(sector, "rq_issue", "rq_done")
            if io is None:
                return
            io.t["rq_done"] = ts
            commit = self.commit_wait.pop(pid, None)
            if commit is None:
                return
            key, t_commit = commit
            io.t["commit"] = t_commit
            io.tag = key[1]
            for k, v in self.tags.pop(key, {}).items():
                if k != "ud" and v >= io.t["rq_issue"]:
                    io.t[k] = v
        elif self.side == "kernel" and dev in self.path_devs:
            io = self.in_flight(sector, "nvme_done", "rq_done")
            if io is not None:
                io.t["rq_done"] = ts

    def on_block_bio_remap(self, comm, pid, cpu, ts, rest):
        b = BIO.match(rest)
        if b and self.side == "kernel":
            self.path_devs.add(f"{b[1]}:{b[2]}")

    def on_block_bio_complete(self, comm, pid, cpu, ts, rest):
        b = BIO.match(rest)
        if not b or f"{b[1]}:{b[2]}" != self.dev or self.side != "kernel":
            return
        io = self.in_flight(int(b[4]), "rq_done", "bio_done")
        if io is not None:
            io.t["bio_done"] = ts

    # -- nvme host and target
    def on_nvme_setup_cmd(self, comm, pid, cpu, ts, rest):
        n = NVME_SETUP.match(rest)
        if not n or "read" not in n[4]:
            return
        s = SLBA.search(n[5])
        if not s:
            return
        slba = int(s[1])
        lbs = next(iter(self.lbs.values()), 512)
        sector = slba * lbs // 512
        # The kernel's nvme_queue_rq sets the command up before it starts the
        # request (block_rq_issue); ublk's request is issued before.
        need = "rq_issue" if self.side == "datapath" else "bio"
        io = self.in_flight(sector, need, "setup")
        if io is None:
            return
        io.t["setup"] = ts
        io.nvme_key = (n[1], n[2], n[3])
        self.nvme_out[io.nvme_key] = io
        self.tgt_wait[(n[2], n[3], slba)].append(io)

    def on_nvme_complete_rq(self, comm, pid, cpu, ts, rest):
        n = NVME_DONE.match(rest)
        if not n:
            return
        io = self.nvme_out.pop((n[1], n[2], n[3]), None)
        if io is not None:
            io.t["nvme_done"] = ts

    def on_nvmet_req_init(self, comm, pid, cpu, ts, rest):
        n = NVMET.match(rest)
        s = SLBA.search(rest)
        if not n or not s:
            return
        q = self.tgt_wait.get((n[2], n[3], int(s[1])))
        if q:
            io = q.popleft()
            io.t["tgt_init"] = ts
            self.tgt_out[(n[1], n[2], n[3])] = io

    def on_nvmet_req_complete(self, comm, pid, cpu, ts, rest):
        n = NVMET.match(rest)
        if not n:
            return
        io = self.tgt_out.pop((n[1], n[2], n[3]), None)
        if io is not None:
            io.t["tgt_done"] = ts

    # -- scheduling and idle
    def on_sched_waking(self, comm, pid, cpu, ts, rest):
        w = WAKING.search(rest)
        if w:
            waker = re.sub(r"[-/:]\d.*", "", comm)
            self.waking[int(w[2])] = (ts, cpu, int(w[3]), waker)

    def on_sched_switch(self, comm, pid, cpu, ts, rest):
        s = SWITCH.search(rest)
        if not s:
            return
        nxt, prev = int(s[4]), int(s[2])
        if prev in self.server_tids and prev in self.on_cpu_since:
            self.server_on_cpu += ts - self.on_cpu_since.pop(prev)
        if nxt in self.server_tids:
            self.on_cpu_since[nxt] = ts
            self.server_switch_ins += 1
        w = self.waking.pop(nxt, None)
        if w is not None:
            self.wakes[nxt].append((w[0], ts, w[1] != w[2], s[3]))
            wakee = "server" if nxt in self.server_tids else s[3]
            if wakee in ("server", "fio"):
                self.wake_pairs[(wakee, w[3], "another CPU" if w[1] != w[2] else "same CPU")].append(ts - w[0])

    def on_cpu_idle(self, comm, pid, cpu, ts, rest):
        m = IDLE.search(rest)
        if not m:
            return
        state, c = int(m[1]), int(m[2])
        if state == 4294967295:
            self.idle_exits += 1
            since = self.idle_since.pop(c, None)
            for t_ipi in self.ipi_pending.pop(c, []):
                if since is not None and t_ipi >= since:
                    self.ipi_to_exit.append(ts - t_ipi)
        else:
            self.idle_since[c] = ts

    def on_ipi_send_cpu(self, comm, pid, cpu, ts, rest):
        m = IPI_CPU.search(rest)
        if m:
            c = int(m[1])
            if c in self.idle_since:
                self.ipi_pending[c].append(ts)

    def on_ipi_send_cpumask(self, comm, pid, cpu, ts, rest):
        m = IPI_MASK.search(rest)
        if not m:
            return
        for part in m[1].split(","):
            lo, _, hi = part.partition("-")
            for c in range(int(lo), int(hi or lo) + 1):
                if c in self.idle_since:
                    self.ipi_pending[c].append(ts)


def slept(wakes, start, end):
    """The wake-up (waking, switch_in, cross) that ended a sleep inside
    [start, end], if the thread slept there; else None."""
    best = None
    for w in wakes:
        if w[1] > end:
            break
        if w[0] >= start and w[1] <= end:
            best = w
    return best


def segments(side):
    if side == "datapath":
        return [
            ("fio submit -> ublkb rq issue (ublk_queue_rq)", "submit", "rq_issue"),
            ("rq issue -> FETCH CQE posted (server woken)", "rq_issue", "fetch_cqe"),
            ("FETCH CQE -> passthru submitted", "fetch_cqe", "pt_submit"),
            ("passthru submitted -> nvme_setup_cmd", "pt_submit", "setup"),
            ("nvme_setup_cmd -> target nvmet_req_init", "setup", "tgt_init"),
            ("target init -> target complete", "tgt_init", "tgt_done"),
            ("target complete -> nvme_complete_rq", "tgt_done", "nvme_done"),
            ("nvme_complete_rq -> passthru CQE posted", "nvme_done", "pt_cqe"),
            ("passthru CQE -> COMMIT submitted", "pt_cqe", "commit"),
            ("COMMIT -> ublkb rq complete", "commit", "rq_done"),
            ("ublkb rq complete -> fio CQE posted", "rq_done", "fio_cqe"),
            ("total: fio submit -> fio CQE posted", "submit", "fio_cqe"),
            ("  of which setup -> complete (the paths)", "setup", "nvme_done"),
            ("  of which outside (ublk + server + fio)", None, None),
        ]
    return [
        ("fio submit -> nvme_setup_cmd (path chosen)", "submit", "setup"),
        ("nvme_setup_cmd -> target nvmet_req_init", "setup", "tgt_init"),
        ("target init -> target complete", "tgt_init", "tgt_done"),
        ("target complete -> nvme_complete_rq", "tgt_done", "nvme_done"),
        ("nvme_complete_rq -> path rq complete", "nvme_done", "rq_done"),
        ("path rq complete -> fio CQE posted", "rq_done", "fio_cqe"),
        ("total: fio submit -> fio CQE posted", "submit", "fio_cqe"),
        ("  of which setup -> complete (the paths)", "setup", "nvme_done"),
        ("  of which outside (the host's stack + fio)", None, None),
    ]


def fmt(v):
    return "-" if v != v else f"{v:.0f}"


def stat_line(label, values):
    if not values:
        return f"{label:50} {'-':>7}"
    return (f"{label:50} {fmt(statistics.mean(values)):>7} {fmt(pct(values, 50)):>7}"
            f" {fmt(pct(values, 90)):>7} {len(values):>6}")


def sleep_split(out, full, wakes, k0, k1, who):
    """For the reads during whose step k0 -> k1 `who` slept: how long until
    it was woken, how long it then waited to run, and the rest."""
    a, runq, b = [], [], []
    for io in full:
        w = slept(wakes, io.t[k0], io.t[k1])
        if w is None:
            continue
        a.append(w[0] - io.t[k0])
        runq.append(w[1] - w[0])
        b.append(io.t[k1] - w[1])
    out.append(f"{k0} -> {k1}: {who} slept in {len(a)} of {len(full)}; then:")
    out.append(stat_line(f"  {k0} -> {who} waking", a))
    out.append(stat_line(f"  {who} waking -> running", runq))
    out.append(stat_line(f"  {who} running -> {k1}", b))


def report_segments(out, trace, rows, name, ios, full):
    span = (trace.last_ts - trace.first_ts) / 1e6 if trace.events else 0
    out.append(f"## {trace.side} / {name}")
    plain = [r for r in rows if r[1] == "plain"]
    traced = [r for r in rows if r[1] == "traced"]
    if plain and traced:
        p_iops = statistics.mean(r[2] for r in plain)
        p_clat = statistics.mean(r[3] for r in plain)
        out.append(
            "fio: plain runs " + ", ".join(f"{r[2]} IOPS / {r[3]} us" for r in plain)
            + f"; traced {traced[0][2]} IOPS / {traced[0][3]} us clat"
            + f" (tracing: IOPS x{traced[0][2] / p_iops:.2f}, clat {traced[0][3] - p_clat:+.0f} us)")
    out.append(f"trace: {trace.events} events over {span:.1f} s; {len(ios)} fio reads"
               f" followed end to end, {len(full)} with every step below")
    out.append("")
    out.append(f"{'segment (us)':50} {'mean':>7} {'p50':>7} {'p90':>7} {'n':>6}")
    for label, k0, k1 in segments(trace.side):
        if k0 is None:
            vals = [(io.t["fio_cqe"] - io.t["submit"]) - (io.t["nvme_done"] - io.t["setup"])
                    for io in full]
        else:
            vals = [io.t[k1] - io.t[k0] for io in full]
        out.append(stat_line(label, vals))


def report_wakes(out, trace, ios, full):
    n = max(len(ios), 1)
    if trace.side == "datapath":
        sw = sorted(w for t in trace.server_tids for w in trace.wakes.get(t, []))
        out.append(stat_line("server thread: waking -> running (all)", [w[1] - w[0] for w in sw]))
        out.append(stat_line("  of which from another CPU", [w[1] - w[0] for w in sw if w[2]]))
        out.append(stat_line("  of which from its own CPU", [w[1] - w[0] for w in sw if not w[2]]))
        sleep_split(out, full, sw, "rq_issue", "fetch_cqe", "server")
        sleep_split(out, full, sw, "nvme_done", "pt_cqe", "server")
        out.append(f"server wake-ups per fio read: {len(sw) / n:.2f}")
    fio_pids = {p for p, w in trace.wakes.items() if w and w[0][3] == "fio"}
    fw = sorted(w for p in fio_pids for w in trace.wakes.get(p, []))
    out.append(stat_line("fio: waking -> running (all)", [w[1] - w[0] for w in fw]))
    sleep_split(out, full, fw, "rq_done", "fio_cqe", "fio")
    out.append(stat_line("IPI to an idle vCPU -> its idle exit", trace.ipi_to_exit))
    out.append(f"idle exits per fio read: {trace.idle_exits / n:.2f}")
    if trace.side == "datapath":
        out.append(f"server thread: {trace.server_switch_ins / n:.2f} switch-ins and"
                   f" {trace.server_on_cpu / n:.0f} us on a CPU per fio read")
    out.append("")
    out.append("wake-ups of fio and the server, by waker (waking -> running, us):")
    for key, v in sorted(trace.wake_pairs.items(), key=lambda kv: -len(kv[1])):
        if len(v) >= len(ios) / 50:
            out.append(stat_line(f"  {key[0]} by {key[1]}, from {key[2]}", v))


def report_bursts(out, full):
    # Convoys: commands that leave within 300 us of the one before travel
    # together, and each waits for the others' processing at every step.
    sends = sorted(io.t["setup"] for io in full)
    if not sends:
        return
    bursts, size = collections.Counter(), 1
    for a, b in zip(sends, sends[1:]):
        if b - a < 300:
            size += 1
        else:
            bursts[size] += 1
            size = 1
    bursts[size] += 1
    total = sum(k * v for k, v in bursts.items())
    out.append("reads by the size of the burst they were sent in (gaps < 300 us): " + ", ".join(
        f"{k}: {100 * k * v / total:.0f} %" for k, v in sorted(bursts.items())))


def report(trace, rows, name):
    ios = [io for io in trace.done if "fio_cqe" in io.t]
    keys = {k for _, k0, k1 in segments(trace.side) if k0 for k in (k0, k1)}
    full = [io for io in ios if keys <= io.t.keys()]
    out = []
    report_segments(out, trace, rows, name, ios, full)
    out.append("")
    report_wakes(out, trace, ios, full)
    report_bursts(out, full)
    return out


LEGEND = """\
steps: submit = fio's io_uring_submit_req; rq_issue = block_rq_issue on the
ublk disk; fetch_cqe = the server's FETCH CQE posted (io_uring_complete);
pt_cqe = its passthru CQE posted; setup / nvme_done = nvme_setup_cmd /
nvme_complete_rq; rq_done = block_rq_complete (the ublk disk; the kernel:
the path disk); fio_cqe = fio's io_uring_complete. "X slept in N": the
reads during whose step X was asleep and woken (sched_waking -> sched_switch).
"""


def main(dirs):
    print(LEGEND)
    for d in dirs:
        rows_f = os.path.join(d, "rows.txt")
        rows = []
        if os.path.exists(rows_f):
            with open(rows_f) as f:
                for line in f:
                    w = line.split()
                    if len(w) >= 5:
                        rows.append((w[0], w[1], int(w[2]), int(w[3]), int(w[4])))
        for tf in sorted(glob.glob(os.path.join(d, "trace-*.txt"))):
            name = os.path.basename(tf)[len("trace-"):-len(".txt")]
            if name.startswith("stats-"):
                continue
            meta_f = os.path.join(d, f"meta-{name}.txt")
            if not os.path.exists(meta_f):
                continue
            trace = Trace(read_meta(meta_f))
            with open(tf, errors="replace") as f:
                for line in f:
                    trace.feed(line)
            print("\n".join(report(trace, [r for r in rows if r[0] == name], name)))
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
