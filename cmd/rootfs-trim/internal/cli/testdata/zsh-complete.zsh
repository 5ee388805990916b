# zsh -f zsh-complete.zsh SCRIPT DIR LINE...
#
# Types each LINE and a tab into an interactive zsh with compinit and the
# completion script SCRIPT loaded, and writes each word the completion
# functions offered for the Nth line into DIR/N, one a line
# (TestCompletionCompletesZsh). zsh completes only inside its line editor,
# hence a pseudo-terminal (zsh/zpty); compadd is wrapped to record the
# words offered, after matching against what is typed (compadd -O).
zmodload zsh/zpty || exit 1
script=$1 dir=$2
shift 2
zpty z zsh -f -i
# Each step waits for the prompt, so that nothing is typed before the line
# editor reads it; the prompt is spelled so that its echo does not match.
prompt() { zpty -r z chunk '*<<rdy>>*' || exit 1 }
zpty -w z "PS1='<<'rdy'>>' RPS1='' HISTFILE=/dev/null; autoload -Uz compinit && compinit -u -D"
prompt
# Calls with -O, -A or -D only compute; the others offer.
zpty -w z 'compadd() {
	if (( ${@[(I)-[OAD]*]} )); then builtin compadd "$@"; return; fi
	local -a offered; builtin compadd -O offered "$@"; print -rl -- $offered >>$out
	builtin compadd "$@"
}'
prompt
zpty -w z "source ${(q)script}; zstyle ':completion:*' list-prompt ''; LISTMAX=10000"
prompt
n=0
for line; do
	n=$((n + 1))
	: >$dir/$n
	zpty -w z "out=${(q)dir}/$n"
	prompt
	zpty -w -n z "$line"$'\t'
	# Ctrl-U clears the line; the marker says the tab was handled.
	zpty -w z $'\C-u'"print -r -- '<<'done'>>'"
	zpty -r z chunk '*<<done>>*' || exit 1
	prompt
done
zpty -d z
