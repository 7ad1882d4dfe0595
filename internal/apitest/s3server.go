package apitest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The credentials of the S3 servers S3Server starts, which an Env with S3Endpoint signs with.
const (
	S3AccessKey = "MGMTAPITESTACCESSKEY"
	S3SecretKey = "mgmtapi-test-secret-key-of-the-loopback-s3"
)

// WeedVariable names the SeaweedFS binary (`weed`) S3Server runs; without it, `weed` on PATH.
const WeedVariable = "MGMTAPI_WEED"

// RequireS3Variable, set to 1 (CI sets it), makes S3Server fail instead of skipping when no
// `weed` binary is found.
const RequireS3Variable = "MGMTAPI_REQUIRE_S3"

// S3Server starts a real S3-compatible server, SeaweedFS's `weed server -s3`, on loopback ports
// with its data in a temporary directory, creates buckets, and returns its endpoint; it is
// stopped when t ends. Requests must be signed with S3AccessKey and S3SecretKey. Without the
// binary the test is skipped (failed when MGMTAPI_REQUIRE_S3=1).
func S3Server(t testing.TB, buckets ...string) string {
	t.Helper()
	bin := os.Getenv(WeedVariable)
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("weed"); err != nil {
			if os.Getenv(RequireS3Variable) == "1" {
				t.Fatalf("no SeaweedFS binary: set %s or put weed on PATH (%s=1 requires it)", WeedVariable, RequireS3Variable)
			}
			t.Skipf("no SeaweedFS binary (weed on PATH or %s): the loopback S3 server cannot run", WeedVariable)
		}
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "s3.json")
	identities := fmt.Sprintf(`{"identities":[{"name":"mgmtapi","credentials":[{"accessKey":%q,"secretKey":%q}],"actions":["Admin","Read","List","Tagging","Write"]}]}`,
		S3AccessKey, S3SecretKey)
	if err := os.WriteFile(config, []byte(identities), 0o600); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 8)
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	args := []string{"server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-dir=" + data,
		"-master.port=" + ports[0], "-master.port.grpc=" + ports[1], "-master.telemetry=false", "-master.volumeSizeLimitMB=64",
		"-volume.port=" + ports[2], "-volume.port.grpc=" + ports[3], "-volume.max=4",
		"-filer", "-filer.port=" + ports[4], "-filer.port.grpc=" + ports[5],
		"-s3", "-s3.port=" + ports[6], "-s3.port.grpc=" + ports[7], "-s3.config=" + config,
		"-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.autoCreateBucket=false",
		"-s3.localSocket=" + filepath.Join(dir, "s3.sock"),
	}
	cmd := exec.Command(bin, args...)
	logFile, err := os.Create(filepath.Join(dir, "weed.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		_ = logFile.Close()
	})
	endpoint := "http://127.0.0.1:" + ports[6]
	client := S3Client(endpoint)
	ctx := context.Background()
	deadline := time.Now().Add(90 * time.Second)
	for _, b := range buckets {
		for {
			_, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)})
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				log, _ := os.ReadFile(logFile.Name())
				t.Fatalf("the S3 server did not create bucket %s in 90 s: %v\n%s", b, err, tail(log, 4000))
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	return endpoint
}

// S3Client is an S3 client of endpoint signed with the test credentials, path-style.
func S3Client(endpoint string) *s3.Client {
	return s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(S3AccessKey, S3SecretKey, ""),
		HTTPClient:  &http.Client{Timeout: 10 * time.Second},
	})
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(t testing.TB, n int) []string {
	t.Helper()
	var out []string
	var held []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
		out = append(out, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	for _, l := range held {
		_ = l.Close()
	}
	return out
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
