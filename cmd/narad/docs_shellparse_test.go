package main

// The reading TestDocsShellBlocks does before it checks anything: the
// fenced blocks of a Markdown file, the commands of a shell or console
// block, and those commands split into words, as far as the docs need and
// no further.

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// block is one fenced block of a Markdown file.
type block struct {
	lang string
	line int // the opening fence's line, 1-based
	text string
}

var fence = regexp.MustCompile("^ {0,3}(```+)\\s*([A-Za-z0-9_+-]*)")

// fencedBlocks returns the fenced blocks of a Markdown text; an unclosed
// one is an error.
func fencedBlocks(text string) ([]block, error) {
	var out []block
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		open := i
		var body []string
		closed := false
		for i++; i < len(lines); i++ {
			if c := fence.FindStringSubmatch(lines[i]); c != nil && c[2] == "" && len(c[1]) >= len(m[1]) {
				closed = true
				break
			}
			body = append(body, lines[i])
		}
		if !closed {
			return nil, fmt.Errorf("line %d: a ``` block that never closes", open+1)
		}
		out = append(out, block{lang: m[2], line: open + 1, text: strings.Join(body, "\n")})
	}
	return out, nil
}

func isShell(lang string) bool {
	return lang == "sh" || lang == "bash" || lang == "shell" || lang == "console"
}

// shellText is the commands of a block: all of it, or in a console block
// the lines after a "$ " prompt (the rest is output), other lines blank
// so line numbers still count from the fence.
func shellText(b block) string {
	if b.lang != "console" {
		return b.text
	}
	lines := strings.Split(b.text, "\n")
	for i, l := range lines {
		if cmd, ok := strings.CutPrefix(l, "$ "); ok {
			lines[i] = cmd
		} else {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// command is one simple command: its words after the environment
// assignments that precede them, and the line (from 1) it starts on.
type command struct {
	words []string
	line  int
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// shellCommands splits shell text into simple commands, as far as the
// docs need: words, '…' and "…" quotes (over lines too), backslash
// escapes and line continuations, comments, the separators | || && ; &
// and newline, and $( … ) and <( … ), whose insides are commands of
// their own. Redirections (2>&1, >file) are kept as words of their
// command. What it cannot split is an error, not a guess.
func shellCommands(src string) ([]command, error) {
	var out []command
	var cur []string
	var word strings.Builder
	inWord := false
	line, start := 1, 1
	endWord := func() {
		if inWord {
			cur = append(cur, word.String())
			word.Reset()
			inWord = false
		}
	}
	endCommand := func() {
		endWord()
		for len(cur) > 0 && assignment.MatchString(cur[0]) {
			cur = cur[1:]
		}
		if len(cur) > 0 {
			out = append(out, command{words: cur, line: start})
		}
		cur = nil
	}
	rs := []rune(src)
	type saved struct {
		cur    []string
		word   string
		inWord bool
		start  int
	}
	var outer []saved
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		if len(cur) == 0 && !inWord {
			start = line
		}
		switch {
		case c == '\n':
			line++
			endCommand()
		case c == ' ' || c == '\t':
			endWord()
		case c == '#' && !inWord:
			for i+1 < len(rs) && rs[i+1] != '\n' {
				i++
			}
		case c == '\\':
			if i+1 < len(rs) && rs[i+1] == '\n' {
				i++
				line++
				endWord()
				continue
			}
			if i+1 < len(rs) {
				i++
				word.WriteRune(rs[i])
				inWord = true
			}
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(rs) && rs[j] != c {
				if c == '"' && rs[j] == '\\' {
					j++
				}
				if j < len(rs) && rs[j] == '\n' {
					line++
				}
				j++
			}
			if j >= len(rs) {
				return nil, fmt.Errorf("a %c quote that never closes", c)
			}
			word.WriteString(string(rs[i+1 : j]))
			inWord = true
			i = j
		case (c == '$' || c == '<') && i+1 < len(rs) && rs[i+1] == '(':
			// A substitution: its inside is a command of its own, and the
			// word around it goes on after it, with the substitution
			// standing in it as written.
			outer = append(outer, saved{cur, word.String() + string(c) + "(…)", true, start})
			cur, inWord = nil, false
			word.Reset()
			i++
		case c == ')' && len(outer) > 0:
			endCommand()
			o := outer[len(outer)-1]
			outer = outer[:len(outer)-1]
			cur, inWord, start = o.cur, o.inWord, o.start
			word.Reset()
			word.WriteString(o.word)
		case c == '|' || c == ';':
			if i+1 < len(rs) && rs[i+1] == c {
				i++
			}
			endCommand()
		case c == '&':
			if inWord && strings.HasSuffix(word.String(), ">") { // 2>&1
				word.WriteRune(c)
				continue
			}
			if i+1 < len(rs) && rs[i+1] == '&' {
				i++
			}
			endCommand()
		default:
			word.WriteRune(c)
			inWord = true
		}
	}
	if len(outer) != 0 {
		return nil, errors.New("a $( or <( that never closes")
	}
	endCommand()
	return out, nil
}
