"""Users, API keys and teams from the command line, as the data directory's administrator."""

from __future__ import annotations

from pathlib import Path

import click

from recallery.cli.common import data_dir_option, engine_on, fail_cleanly, find_user, main
from recallery.models import User


@main.group()
def user() -> None:
    """Users."""


@user.command("create")
@click.argument("name")
@click.option("--admin", is_flag=True, help="Make the user an administrator.")
@data_dir_option
@fail_cleanly
def user_create(name: str, admin: bool, data_dir: Path | None) -> None:
    """Create a user and print its id."""
    with engine_on(data_dir) as (engine, root):
        created = engine.add_user(root, name, admin=admin)
        click.echo(_user_line(created))


@user.command("list")
@data_dir_option
@fail_cleanly
def user_list(data_dir: Path | None) -> None:
    """List users: id, name, admin."""
    with engine_on(data_dir) as (engine, root):
        click.echo("id\tname\trole")
        for u in engine.list_users(root):
            click.echo(_user_line(u))


def _user_line(u: User) -> str:
    return "\t".join([u.id, u.name, *(["admin"] if u.is_admin else [])])


@main.group()
def key() -> None:
    """API keys."""


@key.command("create")
@click.option("--user", "user_name", required=True, help="User name or id.")
@click.option("--name", default="", help="A label for the key.")
@click.option("--scope", multiple=True, help="Limit the key to this memory id (repeatable).")
@click.option(
    "--capability",
    "capabilities",
    multiple=True,
    type=click.Choice(["read", "write", "manage"]),
    help="Limit what the key may do (repeatable; default: everything).",
)
@data_dir_option
@fail_cleanly
def key_create(
    user_name: str,
    name: str,
    scope: tuple[str, ...],
    capabilities: tuple[str, ...],
    data_dir: Path | None,
) -> None:
    """Create a key and print it (it is shown only this once)."""
    with engine_on(data_dir) as (engine, root):
        owner = find_user(engine, root, user_name)
        key_id, secret = engine.create_api_key(
            root, owner.id, name=name, scope=scope or None, capabilities=capabilities or None
        )
        click.echo(f"key id: {key_id}\nkey:    {secret}")


@key.command("list")
@click.option("--user", "user_name", required=True, help="User name or id.")
@data_dir_option
@fail_cleanly
def key_list(user_name: str, data_dir: Path | None) -> None:
    """List a user's keys: id, name, scope, capabilities, state."""
    with engine_on(data_dir) as (engine, root):
        owner = find_user(engine, root, user_name)
        click.echo("id\tname\tscope\tcapabilities\tstate")
        for k in engine.list_api_keys(root, owner.id):
            scope = ",".join(k.scope) if k.scope is not None else "*"
            may = ",".join(k.capabilities) if k.capabilities is not None else "read,write,manage"
            state = "revoked" if k.revoked_at else "live"
            click.echo(f"{k.id}\t{k.name}\t{scope}\t{may}\t{state}")


@key.command("revoke")
@click.argument("key_id")
@click.option("--user", "user_name", required=True, help="The key's user (name or id).")
@data_dir_option
@fail_cleanly
def key_revoke(key_id: str, user_name: str, data_dir: Path | None) -> None:
    """Revoke a key."""
    with engine_on(data_dir) as (engine, root):
        engine.revoke_api_key(root, find_user(engine, root, user_name).id, key_id)
        click.echo(f"revoked {key_id}")


@main.group()
def team() -> None:
    """Teams: every user owns one; members see the owner's memories shared with the team."""


@team.command("add")
@click.option("--owner", required=True, help="The team's owner (name or id).")
@click.option("--member", required=True, help="The user who joins (name or id).")
@data_dir_option
@fail_cleanly
def team_add(owner: str, member: str, data_dir: Path | None) -> None:
    """Add a member to a user's team."""
    with engine_on(data_dir) as (engine, root):
        tenant = find_user(engine, root, owner)
        joining = find_user(engine, root, member)
        engine.join_team(root, tenant.id, joining.id)
        click.echo(f"{joining.name} joined {tenant.name}'s team")
