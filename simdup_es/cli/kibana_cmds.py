"""``simdup kibana objects|import``: the saved objects shipped in the package (:mod:`simdup_es.dashboards`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..dashboards import DASHBOARDS, DATE_PLACEHOLDER, DEFAULT_BASE_URL, DASHBOARD_PATH, Target, detect, \
    import_objects, saved_objects
from ._common import open_output

F = TypeVar("F", bound=Callable[..., Any])


def _object_options(func: F) -> F:
    options = [
        click.option("--base-url", default=DEFAULT_BASE_URL, show_default=True, envvar="SIMDUP_BASE_URL",
                     help="Address of 'simdup serve' as the browser reaches it: each document's _id links to "
                          "BASE_URL/report/ID [env SIMDUP_BASE_URL]."),
        click.option("--date-field", default=DATE_PLACEHOLDER, show_default=True, envvar="SIMDUP_DATE_FIELD",
                     help="Your documents' date field, for the 'duplicate share over time' panel "
                          "[env SIMDUP_DATE_FIELD]."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@click.group()
def kibana() -> None:
    """Kibana / OpenSearch Dashboards saved objects: a data view, the duplicate groups, a dashboard.

    Each document's _id links to its copy report in 'simdup serve'
    (BASE_URL/report/ID). See docs/kibana.md.
    """


@kibana.command("objects")
@click.option("--dashboards", type=click.Choice(DASHBOARDS), default="kibana", show_default=True,
              help="Which application the objects are for.")
@_object_options
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write them here instead of stdout.")
def objects(dashboards: str, base_url: str, date_field: str, output: Path | None) -> None:
    """Print the saved objects (NDJSON), to import by hand (Saved objects → Import)."""
    data = saved_objects(dashboards, base_url=base_url, date_field=date_field)  # type: ignore[arg-type]
    if output is None:
        click.echo(data.decode("utf-8"), nl=False)
        return
    with open_output(output) as f:
        f.write(data.decode("utf-8"))
    click.echo(f"wrote {output}: import it in {dashboards} (Saved objects → Import, overwrite)", err=True)


@kibana.command("import")
@click.option("--kibana-url", required=True, envvar="SIMDUP_KIBANA_URL",
              help="Kibana or OpenSearch Dashboards, with /s/SPACE for a Kibana space [env SIMDUP_KIBANA_URL].")
@click.option("--dashboards", type=click.Choice(["auto", *DASHBOARDS]), default="auto", show_default=True,
              help="Which application answers there; auto asks it (OpenSearch Dashboards sends osd-name).")
@_object_options
@click.option("--user", envvar="SIMDUP_KIBANA_USER", help="User for basic auth [env SIMDUP_KIBANA_USER].")
@click.option("--password", envvar="SIMDUP_KIBANA_PASSWORD", help="Password [env SIMDUP_KIBANA_PASSWORD].")
@click.option("--api-key", envvar="SIMDUP_KIBANA_API_KEY", help="API key (Kibana) [env SIMDUP_KIBANA_API_KEY].")
@click.option("--ca-cert", type=click.Path(exists=True, dir_okay=False), help="CA certificate for https.")
@click.option("--insecure", is_flag=True, help="Do not verify the TLS certificate (testing only).")
def import_(kibana_url: str, dashboards: str, base_url: str, date_field: str, user: str | None,
            password: str | None, api_key: str | None, ca_cert: str | None, insecure: bool) -> None:
    """Import the saved objects into Kibana 8 or OpenSearch Dashboards (overwriting earlier ones).

    Run 'simdup setup' first so the index and its mappings exist, and
    'simdup groups' to fill dup_group; the panels are empty until then.
    """
    from ..es.connection import is_loopback

    target = Target(kibana_url, username=user, password=password, api_key=api_key, ca_certs=ca_cert,
                    verify_certs=not insecure)
    if (user or api_key) and kibana_url.startswith("http:") and not is_loopback(kibana_url):
        click.echo("warning: credentials go to Kibana over plain http://: use https:// outside a trusted network",
                   err=True)
    chosen = detect(target) if dashboards == "auto" else dashboards
    data = saved_objects(chosen, base_url=base_url, date_field=date_field)  # type: ignore[arg-type]
    count = import_objects(target, data, chosen)  # type: ignore[arg-type]
    click.echo(f"imported {count} saved objects into {chosen}; documents link to {base_url.rstrip('/')}/report/ID; "
               f"dashboard: {kibana_url.rstrip('/')}{DASHBOARD_PATH}", err=True)


def register(main: click.Group) -> None:
    main.add_command(kibana)
