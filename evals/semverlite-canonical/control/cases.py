# Runs in a CHILD process with the candidate's package imported from the workspace; the
# parent (acceptance.py) alone prints the protocol document. Whether an answer is right is
# decided by the host, which alone knows the expected answers.
import json
import os
import sys

marker = sys.argv[1]
out = sys.stdout
# candidate output goes to stderr so stdout carries only the result line
sys.stdout = sys.stderr
sys.path.insert(0, os.getcwd())


def refusal(fn):
    try:
        fn()
    except ValueError as err:
        return type(err).__name__
    return "accepted"


CASES = {
    "minor_two_digits": lambda m: m.compare("1.10.0", "1.9.0"),
    "patch_two_digits": lambda m: m.compare("2.0.9", "2.0.10"),
    "same_version": lambda m: m.compare("v3.4.5", "3.4.5"),
    "sort_mixed": lambda m: m.sort_versions(["1.10.0", "1.2.0", "v1.9.3", "0.20.1"]),
    "latest_major": lambda m: m.latest(["9.0.0", "10.0.0", "9.12.0"]),
    "refuses_short": lambda m: refusal(lambda: m.compare("1.2", "1.2.0")),
}

results = {}
try:
    import semverlite as mod
except BaseException as err:  # a broken package loses every case, it does not stop the harness
    mod = None
    for case_id in CASES:
        results[case_id] = {"actual": None, "error": f"import failed: {str(err)[:300]}"}
if mod is not None:
    for case_id, run in CASES.items():
        try:
            results[case_id] = {"actual": json.loads(json.dumps(run(mod))), "error": None}
        except BaseException as err:
            results[case_id] = {"actual": None, "error": f"{type(err).__name__}: {str(err)[:300]}"}

out.write(f"{marker} {json.dumps(results)}\n")
out.flush()
