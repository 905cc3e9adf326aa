# Hidden acceptance for fixtures/semverlite. Run as `python3 /control/acceptance.py` with
# cwd = the candidate workspace. Prints EXACTLY one JSON document:
#   {"schema_version":1,"cases":[{"id","passed","actual","error"}]}
# `actual` is each case's answer; `passed` says the case ran and gave one. Whether the
# answer is RIGHT is decided by the host Verifier against task.json's
# `acceptance.expected`, which never enters the sandbox (the code under test runs in
# here too and could read or print anything this harness can).
import json
import os
import secrets
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = ["minor_two_digits", "patch_two_digits", "same_version", "sort_mixed", "latest_major", "refuses_short"]
marker = "ACCEPTANCE-RESULT-" + secrets.token_hex(8)

results = None
run_error = None
try:
    # the candidate's code is imported only in this child: what it prints or how it exits cannot forge our output
    child = subprocess.run(
        [sys.executable, "-B", os.path.join(HERE, "cases.py"), marker],
        cwd=os.getcwd(),
        capture_output=True,
        text=True,
        timeout=30,
    )
    line = next((l for l in child.stdout.split("\n") if l.startswith(marker + " ")), None)
    if line is None:
        run_error = f"case runner exited {child.returncode} without a result"
    else:
        results = json.loads(line[len(marker) + 1 :])
except subprocess.TimeoutExpired:
    run_error = "case runner timed out"
except ValueError:
    run_error = "case runner printed an unreadable result"

cases = []
for case_id in CASES:
    r = (results or {}).get(case_id)
    if not isinstance(r, dict):
        cases.append({"id": case_id, "passed": False, "actual": None, "error": run_error or "no result for this case"})
    elif r.get("error") is not None:
        cases.append({"id": case_id, "passed": False, "actual": None, "error": str(r["error"])[:300]})
    else:
        cases.append({"id": case_id, "passed": True, "actual": r.get("actual"), "error": None})

sys.stdout.write(json.dumps({"schema_version": 1, "cases": cases}) + "\n")
sys.exit(0 if all(c["passed"] for c in cases) else 1)
