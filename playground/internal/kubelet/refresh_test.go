package kubelet

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// readTree returns every file under dir by relative path, and the folders.
func readTree(t *testing.T, dir string) (map[string]string, []string) {
	t.Helper()
	files := map[string]string{}
	var folders []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel != "." {
				folders = append(folders, rel)
			}
			return nil
		}
		b, err := os.ReadFile(p)
		files[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, folders
}

func TestSyncFiles(t *testing.T) {
	cases := []struct {
		name        string
		before      map[string][]byte // written first; nil: empty folder
		after       map[string][]byte
		wantChanged []string
		wantFolders []string
	}{
		{name: "first write", after: map[string][]byte{"a": []byte("1"), "d/b": []byte("2")},
			wantChanged: []string{"a", "d/b"}, wantFolders: []string{"d"}},
		{name: "nothing changed", before: map[string][]byte{"a": []byte("1")}, after: map[string][]byte{"a": []byte("1")}},
		{name: "one key changed", before: map[string][]byte{"a": []byte("1"), "b": []byte("2")},
			after: map[string][]byte{"a": []byte("1"), "b": []byte("3")}, wantChanged: []string{"b"}},
		{name: "a key disappeared", before: map[string][]byte{"a": []byte("1"), "b": []byte("2")},
			after: map[string][]byte{"a": []byte("1")}, wantChanged: []string{"b"}},
		{name: "a nested key disappeared with its folder", before: map[string][]byte{"a": []byte("1"), "d/e/b": []byte("2")},
			after: map[string][]byte{"a": []byte("1")}, wantChanged: []string{"d/e/b"}},
		{name: "every key disappeared (optional source deleted)", before: map[string][]byte{"a": []byte("1")},
			after: map[string][]byte{}, wantChanged: []string{"a"}},
		{name: "a key was added", before: map[string][]byte{"a": []byte("1")},
			after: map[string][]byte{"a": []byte("1"), "c": []byte("")}, wantChanged: []string{"c"}},
		{name: "a path climbing out stays inside", after: map[string][]byte{"../../x": []byte("1")},
			wantChanged: []string{"x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "vol")
			if tc.before != nil {
				if _, err := syncFiles(dir, tc.before, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			changed, err := syncFiles(dir, tc.after, 0o400)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(changed, tc.wantChanged) {
				t.Errorf("changed %q, want %q", changed, tc.wantChanged)
			}
			files, folders := readTree(t, dir)
			want := map[string]string{}
			for k, v := range tc.after {
				want[strings.TrimPrefix(filepath.Clean("/"+k), "/")] = string(v)
			}
			if len(files) != len(want) {
				t.Errorf("files %q, want %q", files, want)
			}
			for k, v := range want {
				if files[k] != v {
					t.Errorf("file %s = %q, want %q", k, files[k], v)
				}
			}
			if !slices.Equal(folders, tc.wantFolders) {
				t.Errorf("folders %q, want %q", folders, tc.wantFolders)
			}
		})
	}
}

// TestSyncFilesReplacesByRename: a reader holding the old file open keeps
// reading the old content (the new file is another inode), the new file has
// the volume's mode, and no temporary file is left behind.
func TestSyncFilesReplacesByRename(t *testing.T) {
	dir := t.TempDir()
	if _, err := syncFiles(dir, map[string][]byte{"key": []byte("old")}, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "key"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := syncFiles(dir, map[string][]byte{"key": []byte("new")}, 0o400); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	n, _ := f.Read(buf)
	if string(buf[:n]) != "old" {
		t.Errorf("open file reads %q, want the old content", buf[:n])
	}
	st, err := os.Stat(filepath.Join(dir, "key"))
	if err != nil || st.Mode().Perm() != 0o400 {
		t.Errorf("new file mode %v (%v), want 0400", st.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("folder holds %d entries, want only key", len(entries))
	}
}

func TestTokensRenewOnlyWhenDue(t *testing.T) {
	cases := []struct {
		name      string
		ttl       time.Duration
		wantCalls int
	}{
		{name: "long-lived token is asked for once", ttl: time.Hour, wantCalls: 1},
		{name: "token past 80 % of its life is asked for again", ttl: -time.Second, wantCalls: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var tk tokens
			calls := 0
			fetch := func() ([]byte, time.Time, error) {
				calls++
				return []byte("tok"), time.Now().Add(tc.ttl), nil
			}
			for range 3 {
				got, err := tk.get("vol/token", fetch)
				if err != nil || string(got) != "tok" {
					t.Fatalf("get = %q, %v", got, err)
				}
			}
			if calls != tc.wantCalls {
				t.Errorf("%d token requests, want %d", calls, tc.wantCalls)
			}
		})
	}
}

func TestTokensKeepNothingOnError(t *testing.T) {
	var tk tokens
	boom := errors.New("boom")
	if _, err := tk.get("k", func() ([]byte, time.Time, error) { return nil, time.Time{}, boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	got, err := tk.get("k", func() ([]byte, time.Time, error) { return []byte("t"), time.Now().Add(time.Hour), nil })
	if err != nil || string(got) != "t" {
		t.Errorf("after an error, get = %q, %v; want a new token", got, err)
	}
}

func TestKVLinesSorted(t *testing.T) {
	m := map[string]string{"b": "2", "a": "1", "c": "3"}
	for range 20 {
		if got := kvLines(m); got != "a=\"1\"\nb=\"2\"\nc=\"3\"\n" {
			t.Fatalf("kvLines = %q", got)
		}
	}
}
