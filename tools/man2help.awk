# man2help.awk: the `probectl CMD --help` text of a command from its scdoc man page, so the
# page and the help are written once (Documentation/man/probectl-CMD.8.scd). For every
# page given it writes two C++ constants (tools/probectl/CMakeLists.txt makes man_help.hpp):
#   kManSummary_CMD  the NAME line's description (the command table's one-line summary)
#   kManHelp_CMD     "Usage: " + SYNOPSIS, DESCRIPTION, and EXAMPLES as "Examples:"
# The OPTIONS section is not taken: --help appends the options the parser knows.
# scdoc markup becomes plain text: *bold* and _underline_ lose their marks (an escaped
# \* or \_ stays), *probectl-CMD*(8) reads 'probectl CMD', a line ending in ++ breaks
# there (the usage continues under the command name), ``` blocks are indented by two.
# usage: awk -f man2help.awk probectl-CMD.8.scd...
function plain(s,    out, i, c, prev, next_c, n) {
	gsub(/\\\*/, "\001", s)
	gsub(/\\_/, "\002", s)
	while (match(s, /\*probectl-[a-z]+\*\([0-9]\)/)) {
		c = substr(s, RSTART + 1, RLENGTH - 5)
		sub(/^probectl-/, "probectl ", c)
		s = substr(s, 1, RSTART - 1) "'" c "'" substr(s, RSTART + RLENGTH)
	}
	gsub(/\*/, "", s)
	# An underscore marks underlining unless it is inside a word (drain_interval_ms).
	out = ""
	n = length(s)
	for (i = 1; i <= n; i++) {
		c = substr(s, i, 1)
		prev = i > 1 ? substr(s, i - 1, 1) : " "
		next_c = i < n ? substr(s, i + 1, 1) : " "
		if (c == "_" && (prev !~ /[A-Za-z0-9]/ || next_c !~ /[A-Za-z0-9]/))
			continue
		out = out c
	}
	gsub(/\001/, "*", out)
	gsub(/\002/, "_", out)
	return out
}
function trim_end() {
	sub(/\n+$/, "", help)
}
function flush_page() {
	if (cmd == "")
		return
	trim_end()
	help = help "\n"
	printf "inline constexpr const char* kManSummary_%s = R\"PROBECTL(%s)PROBECTL\";\n", cmd, summary
	printf "inline constexpr const char* kManHelp_%s = R\"PROBECTL(%s)PROBECTL\";\n", cmd, help
}
FNR == 1 {
	flush_page()
	cmd = FILENAME
	sub(/.*\/probectl-/, "", cmd)
	sub(/\.[0-9]\.scd$/, "", cmd)
	gsub(/-/, "_", cmd)
	section = ""; summary = ""; help = ""; usage_lines = 0; fence = 0; broke = 0
	indent = ""
}
/^# / {
	section = substr($0, 3)
	if (section == "EXAMPLES") {
		trim_end()
		help = help "\n\nExamples:\n"
	} else if (section == "DESCRIPTION") {
		trim_end()
		help = help "\n\n"
	}
	next
}
section == "NAME" && /^probectl-/ {
	summary = $0
	sub(/^[^ ]+ - /, "", summary)
	next
}
section == "SYNOPSIS" {
	if ($0 == "") {
		broke = 0
		next
	}
	line = $0
	hard = sub(/ *\+\+$/, "", line)
	line = plain(line)
	if (broke)
		help = help indent line "\n"
	else if (usage_lines++ == 0)
		help = help "Usage: " line "\n"
	else
		help = help "       " line "\n"
	if (!broke && hard) {
		# Continuations line up after "Usage: probectl CMD ".
		match(line, /^probectl [a-z]+ /)
		indent = sprintf("%" (7 + RLENGTH) "s", "")
	}
	broke = hard
	next
}
section == "DESCRIPTION" {
	if ($0 == "" && help ~ /\n\n$/)
		next
	help = help plain($0) "\n"
	next
}
section == "EXAMPLES" {
	if ($0 ~ /^```/) {
		fence = !fence
		next
	}
	if (fence)
		help = help "  " $0 "\n"
	else if ($0 != "")
		help = help plain($0) "\n"
	next
}
END {
	flush_page()
}
