package foreground

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// childVariable makes the test binary a child that attaches to its parent's count (descriptor 3)
// and answers Serving for each line it reads.
const childVariable = "FOREGROUND_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childVariable) == "1" {
		if err := Attach(os.NewFile(3, "foreground")); err != nil {
			fmt.Println("attach:", err)
			os.Exit(1)
		}
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			fmt.Println(Serving())
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A child that attached to the count sees the requests its parent enters and leaves, as they
// happen; the parent still counts its own.
func TestAChildSeesTheParentsRequests(t *testing.T) {
	if File() == nil {
		t.Fatal("the count is not in a memory file: a child cannot see it")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childVariable+"=1")
	cmd.ExtraFiles = []*os.File{File()}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	answers := bufio.NewScanner(stdout)
	childSees := func() string {
		t.Helper()
		fmt.Fprintln(stdin)
		if !answers.Scan() {
			t.Fatalf("the child answered nothing: %v", answers.Err())
		}
		return answers.Text()
	}
	steps := []struct {
		do   func()
		want string
	}{
		{func() {}, "false"},
		{Enter, "true"},
		{Enter, "true"},
		{Leave, "true"},
		{Leave, "false"},
	}
	for i, s := range steps {
		s.do()
		if got := childSees(); got != s.want {
			t.Fatalf("step %d: the child sees Serving %s, want %s", i, got, s.want)
		}
		if here := fmt.Sprint(Serving()); here != s.want {
			t.Fatalf("step %d: the parent sees Serving %s, want %s", i, here, s.want)
		}
	}
}
