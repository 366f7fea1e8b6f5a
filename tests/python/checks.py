"""checks.py: what the Python tests share: check() and raises() print one line each and count
the failures; finish() prints the count and exits 1 when any failed."""
import sys

failed = 0


def check(ok, what):
    global failed
    print(("ok   " if ok else "FAIL ") + what)
    failed += not ok


def raises(exc, fn, what, text=""):
    try:
        fn()
    except exc as e:
        check(text in str(e), f"{what}: {type(e).__name__}: {e}")
        return
    check(False, f"{what}: no {exc.__name__}")


def finish():
    print(f"{'FAILED' if failed else 'passed'}: {failed} failures")
    sys.exit(1 if failed else 0)
