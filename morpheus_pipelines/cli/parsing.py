"""How a ``morpheus`` command line is read: Click, plus the spellings of the argparse parser it
replaced, so that every command line that worked before still works.

* A long option may be shortened to any unambiguous prefix (``--sub`` for ``--subscription``).
* In a group that was one argparse parser with a positional action (``db``, ``api-key``, …),
  options may come before the sub-command (``morpheus db --driver psycopg url``), and an option
  or trailing argument that only a sibling sub-command declares is checked, then ignored
  (``morpheus db start --driver psycopg``): that parser accepted every option for every action.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import click

HELP_OPTIONS = ("-h", "--help")
CONTEXT_SETTINGS: dict[str, Any] = {"help_option_names": list(HELP_OPTIONS), "show_default": True}

# What each token of a command line is, as argparse read it.
OPTION, VALUE, POSITIONAL, REST = "option", "value", "positional", "rest"


def _options(params: Iterable[click.Parameter]) -> dict[str, click.Option]:
    return {
        name: param
        for param in params
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
    }


def _spelled_out(token: str, options: Mapping[str, click.Option], ctx: click.Context) -> str:
    """``token`` with an abbreviated long option written in full; a prefix of several is a
    usage error, as it was."""
    if not token.startswith("--") or token == "--":
        return token
    name, equals, value = token.partition("=")
    if name in options:
        return token
    matches = sorted(full for full in options if full.startswith("--") and full.startswith(name))
    if len(matches) > 1:
        raise click.BadOptionUsage(
            name, f"Option '{name}' is ambiguous: {', '.join(matches)}.", ctx
        )
    return matches[0] + equals + value if matches else token


def read_tokens(
    args: Iterable[str], options: Mapping[str, click.Option], ctx: click.Context
) -> list[tuple[str, str]]:
    """Each token with what it is (OPTION, an option's VALUE, POSITIONAL, or REST after
    ``--``), abbreviated options spelled out."""
    tokens: list[tuple[str, str]] = []
    expecting_value = rest = False
    for token in args:
        if rest or expecting_value:
            tokens.append((REST if rest else VALUE, token))
            expecting_value = False
        elif token == "--":
            tokens.append((REST, token))
            rest = True
        elif token.startswith("-") and token != "-":
            token = _spelled_out(token, options, ctx)
            option = options.get(token.partition("=")[0])
            expecting_value = (
                option is not None and not (option.is_flag or option.count) and "=" not in token
            )
            tokens.append((OPTION, token))
        else:
            tokens.append((POSITIONAL, token))
    return tokens


def _units(tokens: Iterable[tuple[str, str]]) -> list[tuple[str, str, str | None]]:
    """The tokens grouped as (kind, token, the separate value of an option or None)."""
    units: list[tuple[str, str, str | None]] = []
    for kind, token in tokens:
        if kind == VALUE and units and units[-1][0] == OPTION:
            units[-1] = (OPTION, units[-1][1], token)
        else:
            units.append((kind, token, None))
    return units


def _tokens(kind: str, token: str, separate: str | None) -> list[tuple[str, str]]:
    return [(kind, token)] if separate is None else [(kind, token), (VALUE, separate)]


class Command(click.Command):
    """A command whose long options may be abbreviated."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        tokens = read_tokens(args, _options(self.get_params(ctx)), ctx)
        return super().parse_args(ctx, [token for _kind, token in tokens])


class _OrderedGroup(click.Group):
    """Sub-commands listed in the order they were added, not alphabetically."""

    command_class = Command

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)


class Group(_OrderedGroup):
    """A group of commands newer than the argparse parser: abbreviated long options, no
    other legacy spelling."""


class RootGroup(_OrderedGroup):
    """The ``morpheus`` command: abbreviated options before the sub-command are spelled out,
    a KeyboardInterrupt (Ctrl-C, or SIGTERM where a command maps it to one) ends the command
    with 130, quietly, instead of Click's "Aborted!", and an error the operator can act on
    (``cli/errors.py``) is ``error: …`` lines and exit status 1, its traceback only with
    ``--debug``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = next((i for i, token in enumerate(args) if not token.startswith("-")), len(args))
        own = read_tokens(args[:first], _options(self.get_params(ctx)), ctx)
        return super().parse_args(ctx, [token for _kind, token in own] + args[first:])

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            return 130
        except (click.ClickException, click.exceptions.Exit):
            raise  # a usage error or --help: Click's own, said by main()
        except Exception as error:
            # Imported on an error only: it knows the database layer's errors.
            from morpheus_pipelines.cli.errors import operator_lines

            lines = None if ctx.params.get("debug") else operator_lines(error)
            if lines is None:
                raise
            for line in lines:
                click.echo(f"error: {line}", err=True)
            return 1


class ActionGroup(_OrderedGroup):
    """A group of sub-commands that replaced one argparse parser's positional action; see the
    module docstring for the spellings it keeps."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        every = _options(self.get_params(ctx))
        for command in self.commands.values():
            every = _options(command.get_params(ctx)) | every
        tokens = read_tokens(args, every, ctx)
        action = next((i for i, (kind, _) in enumerate(tokens) if kind == POSITIONAL), None)
        helped = any(t in HELP_OPTIONS for _, t in tokens[: action or 0])
        if action is None or helped:
            return super().parse_args(ctx, [token for _kind, token in tokens])
        name = tokens[action][1]
        rest = tokens[:action] + tokens[action + 1 :]
        command = self.commands.get(name)
        if command is not None:
            rest = self._without_siblings_only(ctx, command, rest, every)
        return super().parse_args(ctx, [name, *(token for _kind, token in rest)])

    def _without_siblings_only(
        self,
        ctx: click.Context,
        command: click.Command,
        tokens: list[tuple[str, str]],
        every: Mapping[str, click.Option],
    ) -> list[tuple[str, str]]:
        """``tokens`` less the options and trailing arguments only another sub-command
        declares, each checked against that sub-command's parameter first (a bad value is a
        usage error, as it was)."""
        own = _options(command.get_params(ctx))
        room = sum(isinstance(p, click.Argument) for p in command.params)
        kept: list[tuple[str, str]] = []
        positionals = 0
        for kind, token, separate in _units(tokens):
            name, equals, attached = token.partition("=")
            sibling = every.get(name) if kind == OPTION and name not in own else None
            if sibling is not None:
                given = attached if equals else separate
                if sibling.is_flag or sibling.count:
                    if given is not None:
                        raise click.BadOptionUsage(
                            name, f"Option '{name}' does not take a value.", ctx
                        )
                elif given is None:
                    raise click.BadOptionUsage(name, f"Option '{name}' requires an argument.", ctx)
                else:
                    sibling.type.convert(given, sibling, ctx)
                continue
            if kind == POSITIONAL:
                positionals += 1
                argument = self._sibling_argument(positionals - 1, command)
                if positionals > room and argument is not None:
                    argument.type.convert(token, argument, ctx)
                    continue
            kept.extend(_tokens(kind, token, separate))
        return kept

    def _sibling_argument(self, index: int, command: click.Command) -> click.Argument | None:
        for sibling in self.commands.values():
            if sibling is command:
                continue
            arguments = [p for p in sibling.params if isinstance(p, click.Argument)]
            if index < len(arguments):
                return arguments[index]
        return None
