package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// updateDocs rewrites the generated parts of the documentation instead of
// comparing them:
//
//	go test ./cmd/bandsolve -run TestStabilityDocMatchesCommand -update
var updateDocs = flag.Bool("update", false, "rewrite the generated tables of docs/stability.md")

// stabilityDoc is the document whose tables the stability command makes.
var stabilityDoc = filepath.Join("..", "..", "docs", "stability.md")

// stabilityDocCommand is the command line whose output the tables are.
var stabilityDocCommand = []string{"stability", "-n", "512", "-format", "markdown"}

// stabilityTables runs the stability command in-process and returns its
// markdown tables by precision ("f32", "f64"): the lines of the table
// under the heading of that precision.
func stabilityTables(t *testing.T) map[string]string {
	t.Helper()
	var out, errOut strings.Builder
	code := run(stabilityDocCommand, &out, &errOut)
	require.Equal(t, 0, code, "bandsolve %s: %s", strings.Join(stabilityDocCommand, " "), errOut.String())
	tables := map[string]string{}
	lines := strings.Split(out.String(), "\n")
	for _, p := range []string{"f32", "f64"} {
		head := "### " + precisionName(p) + ","
		var tbl []string
		for i, l := range lines {
			if !strings.HasPrefix(l, head) {
				continue
			}
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
				j++
			}
			for ; j < len(lines) && strings.HasPrefix(lines[j], "|"); j++ {
				tbl = append(tbl, lines[j])
			}
			break
		}
		require.NotEmpty(t, tbl, "no %s table in the output of the stability command:\n%s", p, out.String())
		tables[p] = strings.Join(tbl, "\n") + "\n"
	}
	return tables
}

// replaceMarked replaces what lies between the lines <!-- name --> and
// <!-- /name --> of doc with body (set off by blank lines).
func replaceMarked(doc, name, body string) (string, error) {
	open, end := "<!-- "+name+" -->\n", "<!-- /"+name+" -->"
	i := strings.Index(doc, open)
	if i < 0 {
		return "", fmt.Errorf("no %q line", strings.TrimSpace(open))
	}
	i += len(open)
	j := strings.Index(doc[i:], end)
	if j < 0 {
		return "", fmt.Errorf("no %q line after %q", end, strings.TrimSpace(open))
	}
	return doc[:i] + "\n" + body + "\n" + doc[i+j:], nil
}

// TestStabilityDocMatchesCommand regenerates the float32 and float64
// tables of docs/stability.md (between <!-- stability:f32 --> and
// <!-- /stability:f32 -->, and likewise f64) with the command the
// document names, and fails where they differ; -update rewrites them.
// The tables are the CPU device's, which computes the same bits on any
// amd64 machine; other architectures may round the generation of the
// randsvd matrices differently (gonum's kernels), so the test runs on
// amd64 only.
func TestStabilityDocMatchesCommand(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("the tables of %s are amd64's; GOARCH is %s", stabilityDoc, runtime.GOARCH)
	}
	raw, err := os.ReadFile(stabilityDoc)
	require.NoError(t, err)
	doc := string(raw)
	require.Contains(t, doc, "go run ./cmd/bandsolve "+strings.Join(stabilityDocCommand, " "),
		"%s must name the command that makes its tables", stabilityDoc)
	want := doc
	for p, tbl := range stabilityTables(t) {
		want, err = replaceMarked(want, "stability:"+p, tbl)
		require.NoError(t, err, stabilityDoc)
	}
	if *updateDocs {
		if want != doc {
			require.NoError(t, os.WriteFile(stabilityDoc, []byte(want), 0o644))
			t.Logf("rewrote the tables of %s", stabilityDoc)
		}
		return
	}
	require.Equal(t, want, doc, "the tables of %s differ from the output of 'bandsolve %s'; rewrite them with\n\tgo test ./cmd/bandsolve -run TestStabilityDocMatchesCommand -update",
		stabilityDoc, strings.Join(stabilityDocCommand, " "))
}

func TestReplaceMarked(t *testing.T) {
	doc := "a\n<!-- x -->\nold\n<!-- /x -->\nb\n"
	got, err := replaceMarked(doc, "x", "| new |\n")
	require.NoError(t, err)
	require.Equal(t, "a\n<!-- x -->\n\n| new |\n\n<!-- /x -->\nb\n", got)
	_, err = replaceMarked(doc, "y", "")
	require.Error(t, err)
	_, err = replaceMarked("<!-- x -->\nno end\n", "x", "")
	require.Error(t, err)
}

// goBlocks returns the fenced ```go blocks of a markdown text, each as
// its lines.
func goBlocks(md string) [][]string {
	var blocks [][]string
	var cur []string
	in := false
	for _, l := range strings.Split(md, "\n") {
		switch {
		case !in && strings.TrimSpace(l) == "```go":
			in, cur = true, nil
		case in && strings.TrimSpace(l) == "```":
			in = false
			blocks = append(blocks, cur)
		case in:
			cur = append(cur, l)
		}
	}
	return blocks
}

// containsLines reports whether the lines of block appear one after
// another in lines, both compared without the white space at their ends.
func containsLines(lines, block []string) bool {
	for i := 0; i+len(block) <= len(lines); i++ {
		ok := true
		for j, b := range block {
			if strings.TrimSpace(lines[i+j]) != strings.TrimSpace(b) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// TestDocGoBlocksAreExamples: every Go block of docs/*.md is an excerpt of
// a test file of the repository (an Example, mostly), line for line, so
// that the code the documentation shows is compiled by the tests (the
// cuda package's with -tags cuda) and cannot drift from the API.
func TestDocGoBlocksAreExamples(t *testing.T) {
	root := filepath.Join("..", "..")
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, docs)
	var tests [][]string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		tests = append(tests, strings.Split(string(b), "\n"))
		return nil
	})
	require.NoError(t, err)
	for _, doc := range docs {
		raw, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, block := range goBlocks(string(raw)) {
			found := false
			for _, lines := range tests {
				if containsLines(lines, block) {
					found = true
					break
				}
			}
			assert.True(t, found, "%s: this Go block is in no test file; make it an Example (or part of one):\n%s", doc, strings.Join(block, "\n"))
		}
	}
}

func TestGoBlocks(t *testing.T) {
	md := "text\n```go\nx := 1\n\ty := 2\n```\n```sh\nls\n```\n  ```go\nz()\n  ```\n"
	blocks := goBlocks(md)
	require.Equal(t, [][]string{{"x := 1", "\ty := 2"}, {"z()"}}, blocks)
	assert.True(t, containsLines([]string{"a", "\tx := 1  ", "\t\ty := 2", "b"}, blocks[0]))
	assert.False(t, containsLines([]string{"x := 1", "b", "y := 2"}, blocks[0]))
}
