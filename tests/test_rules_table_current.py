"""docs/rules.md is generated from the primitive table and the rule
registries: it must say what the code has (a rule added without
regenerating it left the table stale)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_rules_table_is_current():
    done = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_rules_table.py"),
                           "--check"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
