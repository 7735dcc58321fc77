# bash completion for probectl: subcommands, their options (read from `probectl CMD --help`,
# so they never go stale), probe kinds, and after the kind kernel symbols (kprobe:,
# kretprobe:, from /proc/kallsyms), syscalls (syscall:), tracepoints (tracepoint:, from
# tracefs) and a binary's functions (uprobe:PATH:, uretprobe:PATH:, via `probectl symbols`);
# each command's --format values, recordings for report.

_probectl_kinds="kprobe: kretprobe: uprobe: uretprobe: usdt: syscall: tracepoint:"

_probectl_options() {
	"$1" "$2" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u
}

# Completes the word $cur (colons included) as a probe spec.
_probectl_spec() {
	local probectl=$1 cur=$2 kind rest path
	case $cur in
	kprobe:* | kretprobe:*)
		kind=${cur%%:*} rest=${cur#*:}
		[ -r /proc/kallsyms ] || return
		mapfile -t COMPREPLY < <(awk -v p="$rest" -v k="$kind" \
			'($2 == "t" || $2 == "T") && index($3, p) == 1 && $3 !~ /\./ { print k ":" $3 }' \
			/proc/kallsyms 2>/dev/null | sort -u | head -n 500)
		;;
	syscall:*)
		rest=${cur#syscall:}
		[ -r /proc/kallsyms ] || return
		mapfile -t COMPREPLY < <(awk -v p="__x64_sys_$rest" \
			'index($3, p) == 1 { sub(/^__x64_sys_/, "", $3); print "syscall:" $3 }' \
			/proc/kallsyms 2>/dev/null | sort -u)
		;;
	tracepoint:*)
		rest=${cur#tracepoint:}
		local t
		for t in /sys/kernel/tracing /sys/kernel/debug/tracing; do
			[ -r "$t/available_events" ] || continue
			mapfile -t COMPREPLY < <(grep -- "^$rest" "$t/available_events" 2>/dev/null |
				sed 's/^/tracepoint:/' | head -n 500)
			break
		done
		;;
	uprobe:*:* | uretprobe:*:*)
		kind=${cur%%:*} rest=${cur#*:} path=${rest%%:*}
		mapfile -t COMPREPLY < <("$probectl" symbols "$path:${rest#*:}*" 2>/dev/null |
			awk -v k="$kind" -v p="$path" '$4 == "FUNC" { sub(/@.*/, "", $6); print k ":" p ":" $6 }' |
			sort -u | head -n 500)
		;;
	uprobe:* | uretprobe:* | usdt:*)
		kind=${cur%%:*} rest=${cur#*:}
		mapfile -t COMPREPLY < <(compgen -f -- "$rest" | sed "s|^|$kind:|")
		;;
	*)
		mapfile -t COMPREPLY < <(compgen -W "$_probectl_kinds" -- "$cur")
		compopt -o nospace 2>/dev/null
		;;
	esac
}

_probectl() {
	local cur prev words cword
	_init_completion -n : || return
	local probectl=${words[0]} cmd="" i
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--) return ;;  # the traced command: leave it to the default completion
		-*) ;;
		*) cmd=${words[i]}; break ;;
		esac
	done
	if [ -z "$cmd" ]; then
		mapfile -t COMPREPLY < <(compgen -W "$("$probectl" --help 2>/dev/null |
			awk '/^Commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}')
			--help --version" -- "$cur")
		return
	fi
	for ((i = i + 1; i < cword; i++)); do
		[ "${words[i]}" = -- ] && { _command_offset $((i + 1)); return; }
	done
	case $prev in
	-o | --output | --output-dir) _filedir; return ;;
	-p | --pid | --attach) mapfile -t COMPREPLY < <(compgen -W "$(ls /proc | grep '^[0-9]')" -- "$cur"); return ;;
	--backend) mapfile -t COMPREPLY < <(compgen -W "kernel ptrace" -- "$cur"); return ;;
	--format)
		local formats="text json"
		case $cmd in
		trace) formats+=" chrome perfetto ctf record" ;;
		report) formats+=" chrome perfetto ctf" ;;
		count) formats+=" folded svg chrome perfetto" ;;
		hist | latency) formats+=" chrome perfetto" ;;
		esac
		mapfile -t COMPREPLY < <(compgen -W "$formats" -- "$cur")
		return
		;;
	--ustack)
		# count's --ustack takes its UNWINDER as the next word too (trace's only after '=')
		if [[ $cmd == count ]]; then
			mapfile -t COMPREPLY < <(compgen -W "fp dwarf" -- "$cur")
			return
		fi
		;;
	-b | --by)
		# task-field keys (a spec's own NAME=... arguments are keys too); KEY,KEY
		local keys="comm pid tid uid cpu retval errno kstack ustack" head=""
		[[ $cur == *,* ]] && head=${cur%,*},
		mapfile -t COMPREPLY < <(compgen -P "$head" -W "$keys" -- "${cur##*,}")
		return
		;;
	esac
	# --ustack=UNWINDER ('=' breaks words): frame pointers or DWARF call frame information
	if [[ $prev == --ustack && $cur == = ]]; then COMPREPLY=(fp dwarf); return; fi
	if [[ $prev == = && ${words[cword - 2]} == --ustack ]]; then
		mapfile -t COMPREPLY < <(compgen -W "fp dwarf" -- "$cur")
		return
	fi
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_probectl_options "$probectl" "$cmd")" -- "$cur")
		return
	fi
	case $cmd in
	trace | record | add | resolve | count | hist | latency) _probectl_spec "$probectl" "$cur" ;;
	report) _filedir ;;
	symbols)
		if [[ $cur == tracepoint:* ]]; then _probectl_spec "$probectl" "$cur"; else _filedir; fi ;;
	esac
	__ltrim_colon_completions "$cur"
}
complete -F _probectl probectl
