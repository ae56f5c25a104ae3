# Sourced by scripts/test and scripts/demo: use the active virtualenv, or create and
# activate .venv, and install the package into it with the extras given ("test", ...),
# and elasticsearch-py SIMDUP_ES_CLIENT (8, the default: it talks to Elasticsearch 8 and
# 9; 9 talks to 9 only), through the extra es8 or es9.
ensure_venv() {
    local extras=${1:-}
    local client=${SIMDUP_ES_CLIENT:-8}
    case $client in
        8 | 9) extras=${extras:+$extras,}es$client ;;
        *) printf '%s: SIMDUP_ES_CLIENT must be 8 or 9, got %s\n' "$(basename "$0")" "$client" >&2; return 2 ;;
    esac
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
