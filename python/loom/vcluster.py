"""A commodity cluster in a box: virtual hosts as Linux network namespaces.

    python -m loom.vcluster run --hosts H [--ranks-per-host R] [--link RATE]
                                [--link-down HOST@SECONDS] -- PROGRAM ARGS...
    python -m loom.vcluster up --hosts H [--link RATE]
    python -m loom.vcluster status
    python -m loom.vcluster down

Each virtual host `host<i>` is a network namespace `loom-<cluster>-host<i>`
(its processes also get a UTS namespace with the host name `host<i>`)
with one interface, `eth0` (address 10.<net>.0.<i+1>/24), joined by a veth
pair to a bridge that lives in a namespace of its own (`loom-<cluster>-sw`),
so nothing is added to the machine's own network and no address leaves it.
`--link RATE` limits every host's link in both directions with a `tc` token
bucket (tbf) on each end of its veth pair. Inside a namespace the names
host0... resolve to the hosts' addresses (`/etc/netns/<ns>/hosts`, which
`ip netns exec` mounts over /etc/hosts).

`run` launches PROGRAM on H*R ranks with OpenMPI's mpirun, started inside
host0's namespace with a hostfile listing the virtual hosts; its launcher
agent (this module, `agent HOST COMMAND`) enters a host's namespace to start
the MPI daemon there. OpenMPI then moves data over TCP between hosts and
through shared memory inside one. `--link-down host1@2.5` takes host1's link
down 2.5 s after the launch (a fault). The cluster is torn down when the
program ends, fails, or the launcher gets SIGINT/SIGTERM; `run` exits with
PROGRAM's status (mpirun's).

Needs root (CAP_NET_ADMIN) and iproute2; `check()` says what is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

STATE_DIR = Path(os.environ.get("LOOM_VCLUSTER_STATE", "/run/loom-vcluster"))
NETNS_ETC = Path("/etc/netns")


class VClusterError(RuntimeError):
    """A cluster that cannot be brought up, found, or used (the message says
    why and what to do)."""


# --- link rates ---------------------------------------------------------------

_RATE_UNITS = {
    # bits per second
    "bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9, "tbit": 10**12,
    # bytes per second (like tc's bps/kbps/...; also the B/s spellings)
    "bps": 8, "kbps": 8 * 10**3, "mbps": 8 * 10**6, "gbps": 8 * 10**9,
    "b/s": 8, "kb/s": 8 * 10**3, "mb/s": 8 * 10**6, "gb/s": 8 * 10**9,
    "tb/s": 8 * 10**12,
}


def parse_rate(text: str) -> int:
    """A link rate in bits per second: `1gbit`, `100mbit`, `2.5gbit/s`
    (bits) or `12GB/s`, `500MB/s`, `12gbps` (bytes, as tc spells them)."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z/]+)\s*", text)
    if not m:
        raise VClusterError(f"link rate {text!r}: expected a number and a unit, "
                            "e.g. 1gbit, 100mbit, 12GB/s")
    value, unit = float(m.group(1)), m.group(2)
    key = unit.lower()
    if key.endswith("bit/s"):  # gbit/s: bits
        key = key[:-2]
    if key not in _RATE_UNITS:
        raise VClusterError(
            f"link rate {text!r}: unknown unit {unit!r} (use bit, kbit, mbit, "
            "gbit, tbit for bits per second, or B/s, kB/s, MB/s, GB/s for bytes)")
    bits = int(value * _RATE_UNITS[key])
    if bits < 8000:
        raise VClusterError(f"link rate {text!r} is below 8 kbit/s; "
                            "a link that slow cannot carry MPI's start-up")
    return bits


def format_rate(bits: int) -> str:
    for unit, scale in (("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3)):
        if bits >= scale and bits % scale == 0:
            return f"{bits // scale}{unit}"
    return f"{bits}bit"


# --- the cluster ----------------------------------------------------------------

@dataclass
class Cluster:
    """The namespaces and links of one virtual cluster (saved as JSON in
    STATE_DIR so `status` and `down` find it from another process)."""
    name: str
    hosts: int
    net: int  # the second octet of 10.<net>.0.0/24
    rate_bits: int | None = None
    created: list[str] = field(default_factory=list)  # namespaces made

    @property
    def switch(self) -> str:
        return f"loom-{self.name}-sw"

    def namespace(self, host: int) -> str:
        return f"loom-{self.name}-host{host}"

    def address(self, host: int) -> str:
        return f"10.{self.net}.0.{host + 1}"

    @property
    def subnet(self) -> str:
        return f"10.{self.net}.0.0/24"

    def host_index(self, host: str) -> int:
        """`host3` or its address -> 3."""
        for i in range(self.hosts):
            if host in (f"host{i}", self.address(i)):
                return i
        raise VClusterError(f"{host!r} is not a host of cluster {self.name!r} "
                            f"(host0..host{self.hosts - 1})")

    def state_file(self) -> Path:
        return STATE_DIR / f"{self.name}.json"

    def save(self) -> None:
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        self.state_file().write_text(json.dumps(self.__dict__, indent=2) + "\n")

    @staticmethod
    def load(name: str) -> "Cluster":
        path = STATE_DIR / f"{name}.json"
        if not path.exists():
            raise VClusterError(f"no virtual cluster {name!r} is up "
                                f"(nothing in {STATE_DIR}); start one with "
                                "`python -m loom.vcluster up --hosts H`")
        return Cluster(**json.loads(path.read_text()))


def _sh(cmd: list[str], netns: str | None = None,
        check: bool = True) -> subprocess.CompletedProcess:
    """Runs `cmd`, inside `netns` when given; VClusterError if it fails."""
    if netns is not None:
        cmd = ["ip", "netns", "exec", netns, *cmd]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise VClusterError(f"`{' '.join(cmd)}` failed: {proc.stderr.strip()}")
    return proc


def _ip(*args: str, netns: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    return _sh(["ip", *args], netns, check)


def check() -> str | None:
    """None when virtual clusters can be made here, else the reason."""
    if os.geteuid() != 0:
        return "virtual hosts need root (network namespaces, tc)"
    for tool in ("ip", "tc", "mpirun"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (iproute2 / openmpi-bin)"
    probe = f"loom-probe-{os.getpid()}"
    proc = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if proc.returncode != 0:
        return f"cannot create a network namespace: {proc.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _tbf(netns: str, dev: str, bits: int) -> None:
    """A token bucket on `dev`'s egress: `bits` per second, a burst of 1 ms
    of traffic (at least 64 KiB, so a full-size TCP segment train passes)
    and 100 ms of queue. A larger bucket lets every message smaller than
    it cross at the veth's own speed after a pause (10 ms of burst made a
    512 KiB tensor-parallel all-reduce over "1 Gbit/s" nearly free), which
    no physical link of that rate does."""
    burst = max(64 * 1024, bits // 8 // 1000)
    _sh(["tc", "qdisc", "replace", "dev", dev, "root", "tbf", "rate", f"{bits}bit",
         "burst", str(burst), "latency", "100ms"], netns)


def _free_net() -> int:
    """A 10.<n>.0.0/24 no other cluster of this machine uses."""
    used = set()
    if STATE_DIR.exists():
        for path in STATE_DIR.glob("*.json"):
            try:
                used.add(json.loads(path.read_text())["net"])
            except (ValueError, KeyError):
                pass
    for n in range(77, 250):
        if n not in used:
            return n
    raise VClusterError("no free 10.x.0.0/24 subnet for another virtual cluster")


def up(hosts: int, rate: str | None = None, name: str = "vc") -> Cluster:
    """Brings up `hosts` virtual hosts; on any failure removes what it made."""
    if hosts < 1:
        raise VClusterError(f"--hosts {hosts}: a cluster needs at least one host")
    if hosts > 200:
        raise VClusterError(f"--hosts {hosts}: at most 200 hosts per cluster")
    if not re.fullmatch(r"[a-z0-9]{1,8}", name):
        raise VClusterError(f"cluster name {name!r}: use 1-8 lower-case letters or digits")
    reason = check()
    if reason:
        raise VClusterError(reason)
    if (STATE_DIR / f"{name}.json").exists():
        raise VClusterError(f"virtual cluster {name!r} is already up; "
                            "take it down first (`python -m loom.vcluster down`)")
    cluster = Cluster(name=name, hosts=hosts, net=_free_net(),
                      rate_bits=parse_rate(rate) if rate else None)
    cluster.save()
    try:
        _ip("netns", "add", cluster.switch)
        cluster.created.append(cluster.switch)
        cluster.save()
        sw = cluster.switch
        _ip("link", "set", "lo", "up", netns=sw)
        _ip("link", "add", "br0", "type", "bridge", netns=sw)
        _ip("link", "set", "br0", "up", netns=sw)
        hosts_text = "127.0.0.1 localhost\n" + "".join(
            f"{cluster.address(i)} host{i}\n" for i in range(hosts))
        for i in range(hosts):
            ns = cluster.namespace(i)
            _ip("netns", "add", ns)
            cluster.created.append(ns)
            cluster.save()
            (NETNS_ETC / ns).mkdir(parents=True, exist_ok=True)
            (NETNS_ETC / ns / "hosts").write_text(hosts_text)
            (NETNS_ETC / ns / "hostname").write_text(f"host{i}\n")
            # The pair is made in the switch namespace, then one end moves.
            port = f"p{i}"
            _ip("link", "add", port, "type", "veth", "peer", "name", "eth0", netns=sw)
            _ip("link", "set", "eth0", "netns", ns, netns=sw)
            _ip("link", "set", port, "master", "br0", netns=sw)
            _ip("link", "set", port, "up", netns=sw)
            _ip("link", "set", "lo", "up", netns=ns)
            _ip("addr", "add", f"{cluster.address(i)}/24", "dev", "eth0", netns=ns)
            _ip("link", "set", "eth0", "up", netns=ns)
            if cluster.rate_bits:
                _tbf(ns, "eth0", cluster.rate_bits)   # host -> switch
                _tbf(sw, port, cluster.rate_bits)     # switch -> host
    except BaseException:
        down(cluster)
        raise
    return cluster


def down(cluster: Cluster) -> None:
    """Removes the cluster's namespaces (their links go with them), its
    /etc/netns files and its state; never raises for what is already gone."""
    for ns in reversed(cluster.created or
                       [cluster.switch] + [cluster.namespace(i) for i in range(cluster.hosts)]):
        # Processes left in a namespace would outlive it: end them first.
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True,
                              text=True).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        shutil.rmtree(NETNS_ETC / ns, ignore_errors=True)
    try:
        cluster.state_file().unlink()
    except FileNotFoundError:
        pass


def status_text(cluster: Cluster) -> str:
    rate = format_rate(cluster.rate_bits) if cluster.rate_bits else "unlimited"
    lines = [f"cluster {cluster.name}: {cluster.hosts} hosts on {cluster.subnet}, "
             f"links {rate}"]
    existing = set(subprocess.run(["ip", "netns", "list"], capture_output=True,
                                  text=True).stdout.split())
    for i in range(cluster.hosts):
        ns = cluster.namespace(i)
        state = "missing"
        if ns in existing:
            out = _ip("-o", "link", "show", "eth0", netns=ns, check=False).stdout
            state = "up" if "state UP" in out or ",UP" in out else "down"
        lines.append(f"  host{i}  {cluster.address(i):<12} netns {ns}  link {state}")
    return "\n".join(lines)


def set_link(cluster: Cluster, host: str, state: str) -> None:
    """Takes `host`'s link `down` or `up` (both ends of its veth pair)."""
    i = cluster.host_index(host)
    _ip("link", "set", "eth0", state, netns=cluster.namespace(i), check=False)
    _ip("link", "set", f"p{i}", state, netns=cluster.switch, check=False)


# --- launching --------------------------------------------------------------------

def hostfile_text(cluster: Cluster, ranks_per_host: int) -> str:
    """An OpenMPI hostfile: one line per virtual host with its slots."""
    return "".join(f"host{i} slots={ranks_per_host}\n" for i in range(cluster.hosts))


def mpirun_command(cluster: Cluster, ranks_per_host: int, hostfile: Path,
                   program: list[str]) -> list[str]:
    """mpirun over the cluster's hosts, to be started inside host0's
    namespace: this module as the launcher agent, TCP between hosts on the
    cluster's subnet, shared memory inside a host."""
    agent = f"{shlex.quote(sys.executable)} -m loom.vcluster agent --cluster {cluster.name}"
    ranks = cluster.hosts * ranks_per_host
    cmd = ["mpirun", "-np", str(ranks), "--hostfile", str(hostfile),
           "--map-by", "slot", "--oversubscribe",
           # Every virtual host is this machine: left to its default, each
           # host's daemon binds its first rank to core 0, so all hosts'
           # ranks would share one core. The kernel schedules them instead.
           "--bind-to", "none",
           "--mca", "plm_rsh_agent", agent,
           "--mca", "plm_rsh_no_tree_spawn", "1",
           "--mca", "oob_tcp_if_include", cluster.subnet,
           "--mca", "btl", "self,vader,tcp",
           "--mca", "btl_tcp_if_include", cluster.subnet]
    for var in ("PATH", "PYTHONPATH", "LD_LIBRARY_PATH"):  # as set here
        if var in os.environ:
            cmd += ["-x", var]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return [*cmd, *program]


def agent(cluster_name: str, argv: list[str]) -> int:
    """OpenMPI's launcher agent (`plm_rsh_agent`): called as
    `agent [ssh-style options] HOST COMMAND...`; runs COMMAND (a shell
    command line) in HOST's namespace."""
    cluster = Cluster.load(cluster_name)
    args = list(argv)
    while args and args[0].startswith("-"):  # e.g. -x (no X11) from OpenMPI
        args.pop(0)
    if len(args) < 2:
        print("loom.vcluster agent: expected HOST COMMAND...", file=sys.stderr)
        return 2
    host, command = args[0], " ".join(args[1:])
    index = cluster.host_index(host)
    os.execvp("ip", in_host(cluster, index, ["/bin/sh", "-c", command]))


def in_host(cluster: Cluster, host: int, cmd: list[str]) -> list[str]:
    """`cmd` run on virtual host `host`: in its network namespace and a UTS
    namespace of its own named `host<i>`, so that MPI_Get_processor_name
    and the runtime's messages name the virtual host."""
    return ["ip", "netns", "exec", cluster.namespace(host), "unshare", "--uts",
            "/bin/sh", "-c", 'hostname "$0" && exec "$@"', f"host{host}", *cmd]


def _run_program(cluster: Cluster, ranks_per_host: int, program: list[str],
                 link_down: list[tuple[str, float]]) -> int:
    with tempfile.TemporaryDirectory(prefix="loom-vcluster-") as tmp:
        hostfile = Path(tmp) / "hostfile"
        hostfile.write_text(hostfile_text(cluster, ranks_per_host))
        cmd = in_host(cluster, 0,
                      mpirun_command(cluster, ranks_per_host, hostfile, program))
        env = dict(os.environ)
        # The agent runs `python -m loom.vcluster`: it must find this package.
        package_root = str(Path(__file__).resolve().parents[1])
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_root, env.get("PYTHONPATH")) if p)
        proc = subprocess.Popen(cmd, env=env, start_new_session=True)
        timers = []
        for host, seconds in link_down:
            def fault(host=host, seconds=seconds):
                print(f"loom.vcluster: taking {host}'s link down "
                      f"({seconds:g} s after the launch)", file=sys.stderr, flush=True)
                set_link(cluster, host, "down")
            t = threading.Timer(seconds, fault)
            t.daemon = True
            t.start()
            timers.append(t)
        try:
            return _wait_for_launch(cluster, proc)
        except BaseException:
            # SIGINT/SIGTERM or an error: stop the whole launch, then let the
            # caller tear the cluster down.
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            raise
        finally:
            for t in timers:
                t.cancel()


# Processes of the launch that are not ranks.
_LAUNCHERS = {"mpirun", "orterun", "orted", "prterun", "prted", "sh", "bash",
              "unshare", "ip", "python", "python3"}
# Seconds mpirun may outlive every rank before it is stopped.
_ORPHAN_GRACE = 5.0


def _rank_pids(cluster: Cluster) -> list[int]:
    """The processes in the cluster's hosts that are not part of the
    launcher (by their command name)."""
    pids = []
    for i in range(cluster.hosts):
        out = subprocess.run(["ip", "netns", "pids", cluster.namespace(i)],
                             capture_output=True, text=True).stdout
        for pid in out.split():
            try:
                name = Path(f"/proc/{pid}/comm").read_text().strip()
            except OSError:
                continue
            if name not in _LAUNCHERS and not name.startswith("python"):
                pids.append(int(pid))
    return pids


def _wait_for_launch(cluster: Cluster, proc: subprocess.Popen) -> int:
    """mpirun's exit status. When a host became unreachable mpirun can wait
    forever for that host's daemon after every rank has ended (each rank
    ends itself: the runtime's watchdog); then it is stopped and the launch
    fails with status 1."""
    seen_ranks = False
    orphaned_since = None
    while True:
        try:
            return proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            pass
        if _rank_pids(cluster):
            seen_ranks = True
            orphaned_since = None
            continue
        if not seen_ranks:
            continue
        now = time.monotonic()
        orphaned_since = orphaned_since or now
        if now - orphaned_since >= _ORPHAN_GRACE:
            print("loom.vcluster: every rank has ended but mpirun has not "
                  "(a host is unreachable); stopping it", file=sys.stderr, flush=True)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return 1


def run(hosts: int, ranks_per_host: int, program: list[str], rate: str | None = None,
        link_down: list[str] | None = None, name: str = "vc") -> int:
    """Brings a cluster up, runs `program` on it under mpirun, tears it down
    (always) and returns the program's exit status."""
    if not program:
        raise VClusterError("no program to run: put it after `--`")
    if ranks_per_host < 1:
        raise VClusterError(f"--ranks-per-host {ranks_per_host}: at least 1")
    faults = []
    for spec in link_down or []:
        host, sep, when = spec.partition("@")
        try:
            seconds = float(when)
        except ValueError:
            seconds = -1.0
        if not sep or seconds < 0:
            raise VClusterError(f"--link-down {spec!r}: expected HOST@SECONDS, e.g. host1@2.5")
        faults.append((host, seconds))

    def stop(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    cluster = None
    try:
        cluster = up(hosts, rate, name)
        for host, _ in faults:
            cluster.host_index(host)  # names a host of this cluster
        return _run_program(cluster, ranks_per_host, program, faults)
    except KeyboardInterrupt:
        print("loom.vcluster: interrupted; tearing the cluster down", file=sys.stderr)
        return 130
    finally:
        if cluster is not None:
            down(cluster)
        for s, handler in old.items():
            signal.signal(s, handler)


# --- command line ------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    program: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, program = argv[:cut], argv[cut + 1:]
    parser = argparse.ArgumentParser(
        prog="python -m loom.vcluster",
        description="Virtual hosts (Linux network namespaces joined by a "
                    "bridge, with tc rate limits) to run MPI programs across, "
                    "on this machine only. Needs root.")
    parser.add_argument("--name", default="vc",
                        help="cluster name (default vc), to run several at once")
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="bring a cluster up, run PROGRAM on it "
                           "with mpirun, tear it down; exits with PROGRAM's status",
                           usage="python -m loom.vcluster run --hosts H "
                           "[--ranks-per-host R] [--link RATE] [--link-down HOST@SECONDS] "
                           "-- PROGRAM ARGS...")
    p_up = sub.add_parser("up", help="bring a cluster up and leave it up")
    for p in (p_run, p_up):
        p.add_argument("--hosts", type=int, required=True, help="number of virtual hosts")
        p.add_argument("--link", metavar="RATE",
                       help="each host's link rate, both directions: 1gbit, "
                            "100mbit, 12GB/s (default: unlimited)")
    p_run.add_argument("--ranks-per-host", type=int, default=1, metavar="R",
                       help="MPI ranks per host (default 1); rank r runs on "
                            "host r // R")
    p_run.add_argument("--link-down", action="append", metavar="HOST@SECONDS",
                       help="take HOST's link down SECONDS after the launch "
                            "(a fault; repeatable)")
    sub.add_parser("down", help="tear the cluster down")
    sub.add_parser("status", help="show the cluster's hosts and links")
    p_hostfile = sub.add_parser("hostfile", help="print the OpenMPI hostfile "
                                "of a cluster that is up")
    p_hostfile.add_argument("--ranks-per-host", type=int, default=1, metavar="R")
    p_agent = sub.add_parser("agent", help=argparse.SUPPRESS)
    p_agent.add_argument("--cluster", required=True)
    p_agent.add_argument("rest", nargs=argparse.REMAINDER)
    p_link = sub.add_parser("link", help="set a host's link down or up")
    p_link.add_argument("host")
    p_link.add_argument("state", choices=["down", "up"])
    args = parser.parse_args(argv)
    try:
        if args.command == "agent":
            return agent(args.cluster, args.rest + program)
        if program and args.command != "run":
            parser.error(f"`{args.command}` takes no program")
        if args.command == "run":
            return run(args.hosts, args.ranks_per_host, program, args.link,
                       args.link_down, args.name)
        if args.command == "up":
            cluster = up(args.hosts, args.link, args.name)
            print(status_text(cluster))
            return 0
        cluster = Cluster.load(args.name)
        if args.command == "down":
            down(cluster)
            print(f"cluster {cluster.name} is down")
        elif args.command == "status":
            print(status_text(cluster))
        elif args.command == "hostfile":
            print(hostfile_text(cluster, args.ranks_per_host), end="")
        elif args.command == "link":
            set_link(cluster, args.host, args.state)
        return 0
    except VClusterError as e:
        print(f"loom.vcluster: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
