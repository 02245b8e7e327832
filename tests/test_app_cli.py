"""``aiplan app`` on the command line: its options, a taken port as one clear line, and the Voilà settings
that serve a meeting (a preheated kernel, culling within 5 minutes). The server itself runs in
tests/test_app_server.py."""

from __future__ import annotations

import socket
import subprocess
import sys

from conftest import ROOT

from aiplan.cli import CULL_IDLE_S, CULL_INTERVAL_S, app_url, build_parser, voila_command


def test_app_options_and_their_defaults():
    args = build_parser().parse_args(["app"])
    assert (args.port, args.host, args.no_browser, args.pool) == (8866, "localhost", False, 1)
    args = build_parser().parse_args(["app", "--port", "9001", "--host", "0.0.0.0", "--no-browser"])
    assert (args.port, args.host, args.no_browser) == (9001, "0.0.0.0", True)


def test_a_taken_port_is_one_line_naming_the_option():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "aiplan", "app", "--port", str(port), "--host", "127.0.0.1",
                               "--no-browser"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: --port: must be a free port on 127.0.0.1; another program listens on it, got {port}; "
        f"choose another with --port"]
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_voila_keeps_a_kernel_warm_and_culls_within_five_minutes():
    argv, _env = voila_command(8899, open_browser=False, host="127.0.0.1")
    options = dict(a.lstrip("-").split("=", 1) for a in argv[2:] if "=" in a)
    assert options["preheat_kernel"] == "True" and options["pool_size"] == "1"
    assert options["Voila.ip"] == "127.0.0.1" and options["Voila.port_retries"] == "0"
    idle, every = int(options["MappingKernelManager.cull_idle_timeout"]), \
        int(options["MappingKernelManager.cull_interval"])
    assert (idle, every) == (CULL_IDLE_S, CULL_INTERVAL_S) and idle + every <= 300
    assert options["MappingKernelManager.cull_connected"] == "False"  # an open tab is never culled


def test_a_pool_keeps_that_many_kernels_warm():
    argv, _env = voila_command(8899, open_browser=False, host="127.0.0.1", pool=3)
    options = dict(a.lstrip("-").split("=", 1) for a in argv[2:] if "=" in a)
    assert options["preheat_kernel"] == "True" and options["pool_size"] == "3"
    assert build_parser().parse_args(["app", "--pool", "3"]).pool == 3
    proc = subprocess.run([sys.executable, "-m", "aiplan", "app", "--pool", "0", "--no-browser"], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: --pool: must be a whole number from 1 to 64, got 0"


def test_the_printed_address():
    assert app_url("localhost", 8866) == "http://localhost:8866/"
    assert app_url("::1", 8866) == "http://[::1]:8866/"
    assert app_url("0.0.0.0", 8866) == f"http://{socket.gethostname()}:8866/"
