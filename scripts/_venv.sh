# Sourced by scripts/test, scripts/demo and .ci/run.
#
# ensure_venv: use the active virtualenv, or create and activate .venv, and install the
# package into it with the extras given ("test", ...), and elasticsearch-py SIMDUP_ES_CLIENT
# (8 or 9: 8 talks to Elasticsearch 8 and 9, 9 to 9 only), through the extra es8 or es9.
# Unset, the client the virtualenv has stays (8 if it has none): the user's `pip install .`
# is not swapped for another client. With cargo on PATH the install builds the compiled
# core (simdup_es._native, from native/); without, it is pure Python. Says which.
#
# ensure_cargo: put a Rust toolchain on PATH when there is none and we may (root with
# apt-get): Debian's cargo where its rustc is new enough for native/, else cargo-web
# (Debian 12: rustc 1.63 is too old, rustc-web 1.96 with the security updates builds it;
# Debian 13's rustc 1.85 is too old). Returns 1 when there is still no cargo.
RUST_MIN=1.88  # native/Cargo.toml rust-version

ensure_cargo() {
    command -v cargo >/dev/null && return 0
    local me pkg rustc candidate
    me=$(basename "$0")
    if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
        printf '%s: no cargo on PATH and no apt-get as root to install one: the compiled core is not built\n' "$me" >&2
        return 1
    fi
    apt-get update -qq
    for pkg in cargo:rustc cargo-web:rustc-web; do
        rustc=${pkg#*:}
        candidate=$(apt-cache policy "$rustc" 2>/dev/null | sed -n 's/^ *Candidate: //p')
        if [[ -n $candidate && $candidate != "(none)" ]] && dpkg --compare-versions "$candidate" ge "$RUST_MIN"; then
            printf '%s: installing a Rust toolchain for the compiled core (apt-get install %s: rustc %s)\n' \
                "$me" "${pkg%%:*}" "$candidate" >&2
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkg%%:*}" >/dev/null
            command -v cargo >/dev/null && return 0
            printf '%s: still no cargo on PATH after installing %s: the compiled core is not built\n' "$me" "${pkg%%:*}" >&2
            return 1
        fi
    done
    printf '%s: apt offers no rustc %s or newer (cargo, cargo-web): the compiled core is not built\n' "$me" "$RUST_MIN" >&2
    return 1
}

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
    local me cargo=""
    me=$(basename "$0")
    command -v cargo >/dev/null && cargo=$(cargo --version)
    printf '%s: installing the package into %s%s\n' "$me" "$VIRTUAL_ENV" \
        "${cargo:+, building the compiled core with $cargo (a minute or two the first time)}" >&2
    local log="$VIRTUAL_ENV/pip-install.log"
    python -m pip install --disable-pip-version-check --no-input -e ".${extras:+[$extras]}" >"$log" 2>&1 || {
        cat "$log" >&2
        return 1
    }
    # Which implementation computes (simdup_es.native; asked without SIMDUP_IMPLEMENTATION, which would refuse).
    if [[ $(SIMDUP_IMPLEMENTATION= python -c 'from simdup_es import native; print(native.implementation())' 2>/dev/null) == native ]]; then
        printf '%s: the compiled core is built (simdup_es._native)\n' "$me" >&2
    elif [[ -n $cargo ]]; then
        printf '%s: cargo is on PATH but the compiled core did not build: pure Python. The build said:\n' "$me" >&2
        grep -iE -A3 'error|failed' "$log" | tail -n 30 >&2
    else
        printf '%s: no cargo on PATH: pure Python (install a Rust toolchain to build the compiled core)\n' "$me" >&2
    fi
}
