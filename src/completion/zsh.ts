// The zsh completion script: native zsh (descriptions for commands and options), sharing the data
// functions with bash. `cmdpath`, never `path`: in zsh `path` is tied to $PATH.
import type { CommandSpec } from './model.js';
import { commentText, shDataFunctions } from './sh-data.js';

const P = '__company_data';

const DRIVER = `_company_data() {
  local cur="\${words[CURRENT]}" cmdpath="" w lastopt="" opt="" spec subs
  local -i i skip=0 npos=0
  local -a described
  for (( i=2; i<CURRENT; i++ )); do
    w="\${words[i]}"
    if (( skip > 0 )); then (( skip-- )); continue; fi
    case "$w" in
      --*=*) continue ;;
      -*)
        if ${P}_takes_value "$cmdpath" "$w"; then lastopt="$w"; skip=1; fi
        continue ;;
    esac
    if (( npos == 0 )) && [[ " $(${P}_commands "$cmdpath") " == *" $w "* ]]; then
      cmdpath="\${cmdpath:+$cmdpath }$w"
    else
      (( npos++ ))
    fi
  done
  if (( skip > 0 )); then
    opt="$lastopt"
  elif [[ "$cur" == --*=* ]]; then
    opt="\${cur%%=*}"
    compset -P '*='
  fi
  if [[ -n "$opt" ]]; then
    spec="$(${P}_option_values "$cmdpath|$opt")"
  elif [[ "$cur" == -* ]]; then
    described=("\${(@f)$(${P}_all_options_described "$cmdpath")}")
    _describe -t options 'option' described
    return
  else
    subs="$(${P}_commands "$cmdpath")"
    if [[ -n "$subs" ]] && (( npos == 0 )); then
      described=("\${(@f)$(${P}_commands_described "$cmdpath")}")
      _describe -t commands 'command' described
      return
    fi
    spec="$(${P}_positional_values "$cmdpath|$npos")"
  fi
  case "$spec" in
    words:*) compadd -- \${=spec#words:} ;;
    list:*) compset -P '*,'; compadd -q -S , -- \${=spec#list:} ;;
    *) _files ;;
  esac
}

if [[ "\${zsh_eval_context[-1]}" == loadautofunc ]]; then
  _company_data "$@"
else
  compdef _company_data company-data
fi`;

export function zshScript(root: CommandSpec, header: string[]): string {
  return [
    '#compdef company-data',
    '# zsh completion for company-data',
    ...header.map((line) => `# ${commentText(line)}`),
    `# Install: company-data completion zsh > "\${fpath[1]}/_company-data"`,
    '#      or: echo \'eval "$(company-data completion zsh)"\' >> ~/.zshrc   (after compinit)',
    '',
    shDataFunctions(root, P),
    '',
    DRIVER,
    '',
  ].join('\n');
}
