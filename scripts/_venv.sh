# Sourced by scripts/test and scripts/demo: use the active virtualenv, or create and
# activate .venv, and install the package into it with the extras given ("test", ...).
ensure_venv() {
    local extras=${1:-}
    if [[ -z ${VIRTUAL_ENV:-} ]]; then
        if [[ ! -x .venv/bin/python ]]; then
            printf '%s: creating .venv\n' "$(basename "$0")" >&2
            python3 -m venv .venv
        fi
        # shellcheck disable=SC1091
        source .venv/bin/activate
    fi
    printf '%s: installing the package into %s\n' "$(basename "$0")" "$VIRTUAL_ENV" >&2
    local log="$VIRTUAL_ENV/pip-install.log"
    python -m pip install --disable-pip-version-check --no-input -e ".${extras:+[$extras]}" >"$log" 2>&1 || {
        cat "$log" >&2
        return 1
    }
}
