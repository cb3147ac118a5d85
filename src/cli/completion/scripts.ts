/**
 * Shell scripts that hand every TAB to `BIN __complete -- WORDS…` and read its answer:
 * `value<TAB>description` lines, then `:N` where N's bit 1 lets the shell fall back to file
 * names and bit 2 keeps the cursor on the word (no space after a `topic/` prefix).
 */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

const fn = (bin: string) => `_${bin.replace(/[^A-Za-z0-9_]/g, '_')}_complete`;

function bash(bin: string): string {
  const f = fn(bin);
  return `# ${bin} completion for bash: add to ~/.bashrc
#   source <(${bin} completion bash)
${f}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" out line directive=0
  COMPREPLY=()
  # The word under the cursor without an opening quote (readline keeps it in COMP_WORDS and
  # closes it after the candidate), so \`'hel\` matches \`hello\`.
  local word="\${cur#[\\"\\']}"
  out=$(command ${bin} __complete -- "\${COMP_WORDS[@]:1:COMP_CWORD-1}" "$word" 2>/dev/null) || return 0
  while IFS= read -r line; do
    case "$line" in
      '') ;;
      :*) directive="\${line#:}" ;;
      *) COMPREPLY+=("\${line%%$'\\t'*}") ;;
    esac
  done <<< "$out"
  if (( directive & 2 )); then compopt -o nospace 2>/dev/null; fi
  if (( \${#COMPREPLY[@]} == 0 && (directive & 1) )); then
    compopt -o filenames 2>/dev/null
    while IFS= read -r line; do COMPREPLY+=("$line"); done < <(compgen -f -- "$cur")
  fi
  return 0
}
complete -F ${f} ${bin}
`;
}

function zsh(bin: string): string {
  const f = fn(bin);
  return `#compdef ${bin}
# ${bin} completion for zsh: either, after compinit in ~/.zshrc,
#   source <(${bin} completion zsh)
# or save it as _${bin} in a directory of $fpath.
${f}() {
  local out line value desc directive=0
  local -a candidates
  # The words before the cursor's without their quotes; the cursor's own as far as the cursor, which
  # compsys has already unquoted into PREFIX (an opening quote stays in words[CURRENT]).
  out=$(command ${bin} __complete -- "\${(@Q)words[2,CURRENT-1]}" "\${(Q)PREFIX}" 2>/dev/null) || return 1
  for line in "\${(@f)out}"; do
    case "$line" in
      '') ;;
      :*) directive="\${line#:}" ;;
      *)
        value="\${line%%$'\\t'*}"
        desc=""
        [[ "$line" == *$'\\t'* ]] && desc="\${line#*$'\\t'}"
        candidates+=("\${value//:/\\\\:}\${desc:+:$desc}")
        ;;
    esac
  done
  if (( \${#candidates} )); then
    if (( directive & 2 )); then _describe -t values '${bin}' candidates -S ''
    else _describe -t values '${bin}' candidates; fi
  elif (( directive & 1 )); then
    _files
  fi
}
if [ "$funcstack[1]" = "_${bin}" ]; then
  ${f} "$@"
else
  compdef ${f} ${bin}
fi
`;
}

function fish(bin: string): string {
  const f = fn(bin);
  return `# ${bin} completion for fish: save as ~/.config/fish/completions/${bin}.fish
function ${f}
    set -l words (commandline -opc)[2..-1] (commandline -ct | string unescape)
    set -l directive 0
    set -l found 0
    for line in (command ${bin} __complete -- $words 2>/dev/null)
        if string match -q -- ':*' $line
            set directive (string sub -s 2 -- $line)
        else if test -n "$line"
            set found 1
            echo $line
        end
    end
    if test $found -eq 0; and test (math "bitand($directive, 1)") -eq 1
        __fish_complete_path (commandline -ct)
    end
end
complete -c ${bin} -f -a '(${f})'
`;
}

export function completionScript(shell: Shell, bin: string): string {
  return { bash, zsh, fish }[shell](bin);
}
