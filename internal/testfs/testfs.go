// Package testfs gives tests a small file system that fills up: a tmpfs
// mounted on a temporary directory, to try writes that fail with "no
// space left on device".
package testfs

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// Small mounts a tmpfs of the given size (bytes, rounded up to pages by
// the kernel) on a new temporary directory and returns that directory;
// it is unmounted when the test ends. The test is skipped, with the
// reason, when the mount fails (mounting needs root, or CAP_SYS_ADMIN).
func Small(t testing.TB, size int) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a %d-byte tmpfs on %s (needs root): %v: %s", size, dir, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, strings.TrimSpace(string(out)))
		}
	})
	return dir
}
