// Hidden acceptance for fixtures/wordwrap. Run as `go run /control/acceptance.go`
// with cwd = the candidate's module. Prints EXACTLY one JSON document:
//
//	{"schema_version":1,"cases":[{"id","passed","actual","error"}]}
//
// This program never imports the candidate's package. It compiles and runs
// /control/cases.go.txt as a CHILD against the candidate's code through
// `go run -overlay`, so the case runner is never copied into the workspace, and
// what the candidate's code prints or how it exits only loses its own answers.
// Whether an answer is RIGHT is decided by the host Verifier against task.json's
// `acceptance.expected`, which never enters the sandbox.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

var cases = []string{"ascii_wrap", "accented_wrap", "accented_pad", "greek_column", "long_word", "blank"}

type result struct {
	Actual any     `json:"actual"`
	Error  *string `json:"error"`
}

type caseOut struct {
	ID     string  `json:"id"`
	Passed bool    `json:"passed"`
	Actual any     `json:"actual"`
	Error  *string `json:"error"`
}

func main() {
	results, runErr := runCases()
	out := make([]caseOut, 0, len(cases))
	all := true
	for _, id := range cases {
		r, ok := results[id]
		switch {
		case !ok:
			msg := runErr
			if msg == "" {
				msg = "no result for this case"
			}
			out = append(out, caseOut{ID: id, Passed: false, Error: &msg})
		case r.Error != nil:
			out = append(out, caseOut{ID: id, Passed: false, Error: r.Error})
		default:
			out = append(out, caseOut{ID: id, Passed: true, Actual: r.Actual})
		}
		all = all && out[len(out)-1].Passed
	}
	doc, _ := json.Marshal(map[string]any{"schema_version": 1, "cases": out})
	fmt.Println(string(doc))
	if !all {
		os.Exit(1)
	}
}

func runCases() (map[string]result, string) {
	_, self, _, _ := runtime.Caller(0) // the source path: the control dir, wherever it is mounted
	control := filepath.Dir(self)
	cwd, err := os.Getwd()
	if err != nil {
		return nil, "no working directory"
	}
	tmp, err := os.MkdirTemp("", "acceptance-")
	if err != nil {
		return nil, "no temp directory"
	}
	defer os.RemoveAll(tmp)
	// a main package that exists only in the build: a folder go test ./... skips (leading dot)
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{
		filepath.Join(cwd, ".mini_agent_acceptance", "main.go"): filepath.Join(control, "cases.go.txt"),
	}})
	overlayPath := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlayPath, overlay, 0o600); err != nil {
		return nil, "cannot write the overlay"
	}
	buf := make([]byte, 8)
	_, _ = rand.Read(buf)
	marker := "ACCEPTANCE-RESULT-" + hex.EncodeToString(buf)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", "-overlay="+overlayPath, "./.mini_agent_acceptance", marker)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(line, marker+" ") {
			rest := strings.TrimPrefix(line, marker+" ")
			var results map[string]result
			if json.Unmarshal([]byte(rest), &results) != nil {
				return nil, "case runner printed an unreadable result"
			}
			return results, ""
		}
	}
	why := "case runner exited without a result"
	if runErr != nil {
		why = fmt.Sprintf("case runner failed (%v): %s", runErr, tail(stderr.String(), 300))
	}
	return nil, why
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
