"""What the agent tests' Python checks share: the harness's result lines, and the stand-in
Pyroscope's log read back (tests/agent/pyroscope_standin.py)."""
import json


def res(name, ok, why=""):
    """PASS (with why on the next line, the figures) or FAIL: why."""
    print(("PASS: %s\n  (%s)" % (name, why)) if ok else ("FAIL: %s: %s" % (name, why)))


def standin_log(log, files=None):
    """The requests the stand-in took, the reasons of those it refused, and the totals of the
    periodic files listed one a line in files."""
    lines = [json.loads(l) for l in open(log)]
    tots = [int(l) for l in open(files)] if files else []
    return ([o for o in lines if "name" in o], [o["refused"] for o in lines if "refused" in o],
            tots)
