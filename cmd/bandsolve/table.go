package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// table is a titled grid of strings; rightAlign marks the numeric columns.
type table struct {
	title      string
	header     []string
	rightAlign []bool
	rows       [][]string
}

// writeText prints t with aligned columns separated by two spaces.
func (t *table) writeText(w io.Writer) error {
	width := make([]int, len(t.header))
	for _, r := range append([][]string{t.header}, t.rows...) {
		for j, s := range r {
			width[j] = max(width[j], utf8.RuneCountInString(s))
		}
	}
	var sb strings.Builder
	if t.title != "" {
		sb.WriteString(t.title)
		sb.WriteString("\n")
	}
	line := func(r []string) {
		var l strings.Builder
		for j, s := range r {
			if j > 0 {
				l.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(s))
			if t.right(j) {
				l.WriteString(pad + s)
			} else {
				l.WriteString(s + pad)
			}
		}
		sb.WriteString(strings.TrimRight(l.String(), " "))
		sb.WriteString("\n")
	}
	line(t.header)
	rule := make([]string, len(t.header))
	for j := range rule {
		rule[j] = strings.Repeat("-", width[j])
	}
	line(rule)
	for _, r := range t.rows {
		line(r)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// writeMarkdown prints t as a GitHub-flavoured pipe table under a heading.
func (t *table) writeMarkdown(w io.Writer) error {
	var sb strings.Builder
	if t.title != "" {
		fmt.Fprintf(&sb, "### %s\n\n", t.title)
	}
	row := func(r []string) {
		sb.WriteString("|")
		for _, s := range r {
			sb.WriteString(" " + markdownEscape(s) + " |")
		}
		sb.WriteString("\n")
	}
	row(t.header)
	sb.WriteString("|")
	for j := range t.header {
		if t.right(j) {
			sb.WriteString("---:|")
		} else {
			sb.WriteString(":---|")
		}
	}
	sb.WriteString("\n")
	for _, r := range t.rows {
		row(r)
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func (t *table) right(j int) bool { return j < len(t.rightAlign) && t.rightAlign[j] }

func markdownEscape(s string) string {
	return strings.NewReplacer(`|`, `\|`, "\n", " ").Replace(s)
}

// writeCSV writes a header and records with encoding/csv.
func writeCSV(w io.Writer, header []string, records [][]string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	if err := cw.WriteAll(records); err != nil {
		return err
	}
	return cw.Error()
}
