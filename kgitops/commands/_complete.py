"""Shell completion scripts written from the argparse tree, so they never drift from the flags.

``tree(parser)`` reads the parser into plain nodes (subcommands, options, which options take
a value and their choices); ``bash``, ``zsh`` and ``fish`` render one static script each: no
Python runs at completion time. The bash and zsh scripts share the walk: from the words before
the cursor they find the (sub)command being typed, skipping option values and the positionals
before a nested command (``get DIR topics``); then they offer that command's subcommands, its
options (after ``-``), an option's choices (``plan --format <TAB>``), or leave it to the shell's
file completion (a folder, a file, any other value)::

    $ kgitops pl<TAB>            -> plan
    $ kgitops plan topics/demo --fo<TAB>   -> --format
    $ kgitops plan topics/demo --format <TAB>  -> json markdown text
    $ kgitops local <TAB>         -> down start-broker status stop-broker up

argparse keeps its actions in ``parser._actions`` (no public accessor); every completion
generator for argparse (shtab, argcomplete) reads it the same way, and it has not changed
since Python 3.2.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field

SAFE_WORD = re.compile(r"[A-Za-z0-9._:/@%+=,-]+")


@dataclass
class Node:
    """One (sub)command: what can follow it."""

    path: tuple[str, ...]
    help: str = ""
    commands: dict[str, Node] = field(default_factory=dict)
    options: list[str] = field(default_factory=list)
    valued: list[str] = field(default_factory=list)  # options that take a value
    choices: dict[str, list[str]] = field(default_factory=dict)  # option -> its choices
    option_help: dict[str, str] = field(default_factory=dict)
    positionals_before: int = 0  # positionals before the nested command (get DIR VIEW)
    positional_choices: list[str] = field(default_factory=list)


def _word(text: object) -> str:
    word = str(text)
    if not SAFE_WORD.fullmatch(word):
        raise ValueError(f"cannot complete {word!r}: not a plain word")
    return word


def tree(parser: argparse.ArgumentParser, path: tuple[str, ...] = (), help: str = "") -> Node:
    node = Node(path, help)
    positionals = 0
    for action in parser._actions:
        if action.help == argparse.SUPPRESS:
            continue
        if not action.option_strings:
            if isinstance(action, argparse._SubParsersAction):
                node.positionals_before = positionals
                helps = {a.dest: a.help or "" for a in action._choices_actions}
                for name, sub in action.choices.items():
                    name = str(name)
                    node.commands[name] = tree(sub, (*path, name), helps.get(name, ""))
            else:
                positionals += 1
                if action.choices is not None:
                    node.positional_choices += sorted(str(c) for c in action.choices)
            continue
        for option in action.option_strings:
            node.options.append(option)
            node.option_help[option] = str(action.help or "").replace("%%", "%")
            if action.nargs != 0:
                node.valued.append(option)
                if action.choices is not None:
                    node.choices[option] = sorted(str(c) for c in action.choices)
    return node


def _walk(node: Node) -> list[Node]:
    nodes = [node]
    for child in node.commands.values():
        nodes += _walk(child)
    return nodes


def _case(name: str, rows: list[tuple[str, list[str]]]) -> str:
    """A shell function setting REPLY by a key (sh syntax both bash and zsh read); every
    word is checked to need no quoting (ValueError otherwise: a script is never broken)."""
    lines = [f"{name}() {{", '  case "$1" in']
    for key, words in rows:
        if words:
            key = "|".join(
                " ".join(_word(w) for w in part.split(" ") if w) for part in key.split("|")
            )
            lines.append(f"    '{key}') REPLY='{' '.join(map(_word, words))}' ;;")
    lines += ["    *) REPLY='' ;;", "  esac", "}"]
    return "\n".join(lines)


def _tables(root: Node) -> str:
    nodes = _walk(root)

    def key(n: Node) -> str:
        return " ".join(n.path)

    return "\n".join(
        [
            _case("_kgitops_commands", [(key(n), sorted(n.commands)) for n in nodes]),
            _case("_kgitops_options", [(key(n), sorted(n.options)) for n in nodes]),
            _case("_kgitops_valued", [(key(n), sorted(n.valued)) for n in nodes]),
            _case("_kgitops_before", [(key(n), [str(n.positionals_before)]) for n in nodes]),
            _case("_kgitops_positional", [(key(n), n.positional_choices) for n in nodes]),
            _case(
                "_kgitops_choices",
                [(f"{key(n)}|{o}", c) for n in nodes for o, c in sorted(n.choices.items())],
            ),
        ]
    )


#: The walk over the words before the cursor, shared by bash and zsh: it sets ``node`` (the
#: command path), ``value_of`` (the option whose value is being typed, if any).
#: ``$1``: the index of the first word after ``kgitops``; words come from ``_kgitops_word I``.
_WALK = """\
_kgitops_walk() {
  local i=$1 last=$2 word seen=0
  node='' value_of=''
  while [ "$i" -lt "$last" ]; do
    _kgitops_word "$i"; word=$REPLY
    case "$word" in
      --) ;;
      -*)
        _kgitops_valued "$node"
        case " $REPLY " in
          *" $word "*)
            if [ $((i + 1)) -eq "$last" ]; then value_of=$word; fi
            i=$((i + 1)) ;;
        esac ;;
      *)
        _kgitops_commands "$node"; local commands=$REPLY
        _kgitops_before "$node"; local before=${REPLY:-0}
        if [ "$seen" -ge "$before" ] && [ -n "$commands" ]; then
          case " $commands " in
            *" $word "*) node=${node:+$node }$word; seen=0 ;;
            *) seen=$((seen + 1)) ;;
          esac
        else
          seen=$((seen + 1))
        fi ;;
    esac
    i=$((i + 1))
  done
  _kgitops_seen=$seen
}

# the words to offer for the current one ($1), in REPLY (empty: leave it to file completion)
_kgitops_offer() {
  local cur=$1
  if [ -n "$value_of" ]; then
    _kgitops_choices "$node|$value_of"; return
  fi
  case "$cur" in
    -*) _kgitops_options "$node"; return ;;
  esac
  _kgitops_before "$node"; local before=${REPLY:-0}
  _kgitops_commands "$node"
  if [ -n "$REPLY" ] && [ "$_kgitops_seen" -ge "$before" ]; then return; fi
  _kgitops_positional "$node"
}"""


def _shared(root: Node, words: str) -> str:
    """What the bash and zsh scripts share: the tables, the word reader (``words``: the
    shell's array of the command line's words) and the walk, with a blank line after."""
    return f"""{_tables(root)}

_kgitops_word() {{ REPLY=${{{words}[$1]}}; }}

{_WALK}
"""


def bash(root: Node) -> str:
    return f"""\
# kgitops completion for bash (written by `kgitops completion bash`).
# Load it in this shell:   eval "$(kgitops completion bash)"
# or for every shell, with the bash-completion package:
#   kgitops completion bash > ~/.local/share/bash-completion/completions/kgitops
{_shared(root, "COMP_WORDS")}
_kgitops() {{
  local node value_of _kgitops_seen cur=${{COMP_WORDS[COMP_CWORD]}}
  _kgitops_walk 1 "$COMP_CWORD"
  _kgitops_offer "$cur"
  COMPREPLY=()
  if [ -n "$REPLY" ]; then
    COMPREPLY=($(compgen -W "$REPLY" -- "$cur"))
  fi
}}

complete -o bashdefault -o default -F _kgitops kgitops
"""


def zsh(root: Node) -> str:
    return f"""\
#compdef kgitops
# kgitops completion for zsh (written by `kgitops completion zsh`).
# Load it in this shell:   source <(kgitops completion zsh)   (after compinit)
# or for every shell:      kgitops completion zsh > "${{fpath[1]}}/_kgitops"
{_shared(root, "words")}
_kgitops() {{
  local node value_of _kgitops_seen REPLY
  _kgitops_walk 2 "$CURRENT"
  _kgitops_offer "${{words[CURRENT]}}"
  if [ -n "$REPLY" ]; then
    compadd -- ${{=REPLY}}
  else
    _files
  fi
}}

if [ "$funcstack[1]" = "_kgitops" ]; then
  _kgitops "$@"
else
  compdef _kgitops kgitops
fi
"""


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fish(root: Node) -> str:
    lines = [
        "# kgitops completion for fish (written by `kgitops completion fish`).",
        "# Load it in this shell:   kgitops completion fish | source",
        "# or for every shell:",
        "#   kgitops completion fish > ~/.config/fish/completions/kgitops.fish",
        "complete -c kgitops -e",
    ]

    def condition(node: Node) -> str:
        """True while the words typed are exactly this node's path (and no subcommand yet)."""
        parts = ["__fish_use_subcommand"] if not node.path else []
        for depth, name in enumerate(node.path):
            parts.append(f"__fish_seen_subcommand_from {_word(name)}")
            if depth == len(node.path) - 1 and node.commands:
                names = " ".join(_word(n) for n in sorted(node.commands))
                parts.append(f"not __fish_seen_subcommand_from {names}")
        return "; and ".join(parts)

    for node in _walk(root):
        cond = _fish_quote(condition(node))
        # -f: no file names beside the words offered, unless a path comes first (get DIR VIEW)
        files = "" if node.positionals_before else " -f"
        for name, child in sorted(node.commands.items()):
            first = child.help.split(";")[0][:80]
            lines.append(
                f"complete -c kgitops{files} -n {cond} -a {_word(name)} -d {_fish_quote(first)}"
            )
        for choice in node.positional_choices:
            lines.append(f"complete -c kgitops -f -n {cond} -a {_word(choice)}")
        for option in sorted(node.options):
            if not option.startswith("--") and len(option) != 2:
                continue
            _word(option)
            flag = f"-l {option[2:]}" if option.startswith("--") else f"-s {option[1:]}"
            desc = _fish_quote(node.option_help.get(option, "").split(";")[0][:80])
            more = ""
            if option in node.choices:
                more = f" -x -a {_fish_quote(' '.join(map(_word, node.choices[option])))}"
            elif option in node.valued:
                more = " -r"
            lines.append(f"complete -c kgitops -n {cond} {flag}{more} -d {desc}")
    return "\n".join(lines) + "\n"


SHELLS = {"bash": bash, "zsh": zsh, "fish": fish}
