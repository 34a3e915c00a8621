// The bash completion script (bash 3.2 and later, so macOS's bash works too: no associative arrays).
import type { CommandSpec } from './model.js';
import { commentText, shDataFunctions } from './sh-data.js';

const P = '__company_data';

/**
 * Walks the words before the cursor: the command path, how many positionals follow it, and
 * whether the cursor sits on the value of an option. bash splits `--format=json` into three words
 * (`=` is in COMP_WORDBREAKS), hence the `=` handling.
 */
const DRIVER = `_company_data() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmdpath="" w i skip=0 npos=0 lastopt="" opt="" spec subs pre
  COMPREPLY=()
  for (( i=1; i<COMP_CWORD; i++ )); do
    w="\${COMP_WORDS[i]}"
    if (( skip > 0 )); then skip=$((skip-1)); continue; fi
    case "$w" in
      -*)
        if ${P}_takes_value "$cmdpath" "$w"; then
          lastopt="$w"
          if [[ "\${COMP_WORDS[i+1]}" == "=" ]]; then skip=2; else skip=1; fi
        fi
        continue ;;
    esac
    if (( npos == 0 )) && [[ " $(${P}_commands "$cmdpath") " == *" $w "* ]]; then
      cmdpath="\${cmdpath:+$cmdpath }$w"
    else
      npos=$((npos+1))
    fi
  done
  # --filter name=<TAB>: bash splits at "=", so the option's name=value words are matched here.
  local eq=$COMP_CWORD
  [[ "$cur" == "=" ]] || eq=$((COMP_CWORD-1))
  if (( eq >= 2 )) && [[ "\${COMP_WORDS[eq]}" == "=" && "\${COMP_WORDS[eq-2]}" == -* ]]; then
    pre="\${COMP_WORDS[eq-1]}="
    [[ "$cur" == "=" ]] && cur=""
    spec="$(${P}_option_values "$cmdpath|\${COMP_WORDS[eq-2]}")"
    if [[ "$spec" == words:*"$pre"* ]]; then
      COMPREPLY=( $(compgen -W "\${spec#words:}" -- "$pre$cur") )
      COMPREPLY=( "\${COMPREPLY[@]#"$pre"}" )
      return 0
    fi
  fi
  (( skip > 0 )) && opt="$lastopt"
  [[ "$cur" == "=" ]] && cur=""
  if [[ -n "$opt" ]]; then
    spec="$(${P}_option_values "$cmdpath|$opt")"
  elif [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$(${P}_all_options "$cmdpath")" -- "$cur") )
    return 0
  else
    subs="$(${P}_commands "$cmdpath")"
    if [[ -n "$subs" ]] && (( npos == 0 )); then
      COMPREPLY=( $(compgen -W "$subs" -- "$cur") )
      return 0
    fi
    spec="$(${P}_positional_values "$cmdpath|$npos")"
  fi
  case "$spec" in
    words:*)
      COMPREPLY=( $(compgen -W "\${spec#words:}" -- "$cur") )
      # name=value words are offered after "=" (above); before it, only the names (name=).
      local kept=() c
      for c in "\${COMPREPLY[@]}"; do [[ "$c" == *=?* ]] || kept+=("$c"); done
      COMPREPLY=( "\${kept[@]}" ) ;;
    list:*)
      pre=""
      [[ "$cur" == *,* ]] && pre="\${cur%,*},"
      COMPREPLY=( $(compgen -P "$pre" -W "\${spec#list:}" -- "\${cur##*,}") ) ;;
    # files: and anything else: an empty reply lets bash complete file names (-o default).
  esac
  return 0
}

complete -o bashdefault -o default -F _company_data company-data`;

export function bashScript(root: CommandSpec, header: string[]): string {
  return [
    '# bash completion for company-data',
    ...header.map((line) => `# ${commentText(line)}`),
    '# Install: company-data completion bash > ~/.local/share/bash-completion/completions/company-data',
    '#      or: echo \'eval "$(company-data completion bash)"\' >> ~/.bashrc',
    '',
    shDataFunctions(root, P),
    '',
    DRIVER,
    '',
  ].join('\n');
}
