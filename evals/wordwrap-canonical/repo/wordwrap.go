// Package wordwrap lays plain text out in fixed-width columns, e.g. for help
// screens and commit message bodies.
package wordwrap

import "strings"

// Wrap breaks text into lines of at most width characters, breaking only at
// spaces. Runs of whitespace collapse to one space; a word longer than width
// gets a line of its own.
func Wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// Pad fills line with spaces on the right up to width characters; a longer
// line is returned unchanged.
func Pad(line string, width int) string {
	if len(line) >= width {
		return line
	}
	return line + strings.Repeat(" ", width-len(line))
}

// Column wraps text and pads every line to width, so the lines can be printed
// next to another column.
func Column(text string, width int) []string {
	lines := Wrap(text, width)
	for i, l := range lines {
		lines[i] = Pad(l, width)
	}
	return lines
}
