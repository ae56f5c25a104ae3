# Sourced by scripts/test and scripts/demo: use the active virtualenv, or create and
# activate .venv, and install the package into it with the extras given ("test", ...),
# and elasticsearch-py SIMDUP_ES_CLIENT (8 or 9: 8 talks to Elasticsearch 8 and 9, 9 to 9
# only), through the extra es8 or es9. Unset, the client the virtualenv has stays (8 if
# it has none): the user's `pip install .` is not swapped for another client.
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
    local client=${SIMDUP_ES_CLIENT:-}
    if [[ -z $client ]]; then
        client=$(python -c 'import elasticsearch; print(elasticsearch.__versionstr__.split(".")[0])' 2>/dev/null || true)
        [[ $client == 8 || $client == 9 ]] || client=8
    fi
    case $client in
        8 | 9) extras=${extras:+$extras,}es$client ;;
        *) printf '%s: SIMDUP_ES_CLIENT must be 8 or 9, got %s\n' "$(basename "$0")" "$client" >&2; return 2 ;;
    esac
    printf '%s: installing the package into %s\n' "$(basename "$0")" "$VIRTUAL_ENV" >&2
    local log="$VIRTUAL_ENV/pip-install.log"
    python -m pip install --disable-pip-version-check --no-input -e ".${extras:+[$extras]}" >"$log" 2>&1 || {
        cat "$log" >&2
        return 1
    }
}
