package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/google/uuid"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
)

// S3 is where the bucket checks go: the operator's S3 endpoint (--s3-endpoint, path-style) or,
// when Endpoint is empty, AWS's own endpoint of the bucket's region; credentials from the usual
// AWS variables (anonymous requests without them).
type S3 struct {
	// Endpoint is the S3 endpoint's base URL, such as http://127.0.0.1:8333; "" means AWS.
	Endpoint string
	// AccessKeyID, SecretAccessKey and SessionToken sign the requests (AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN); without a key id the requests are anonymous.
	AccessKeyID, SecretAccessKey, SessionToken string
	// Timeout bounds one whole check (10 s when 0).
	Timeout time.Duration
}

// S3FromEnv returns the S3 settings of endpoint with the credentials of the usual AWS variables
// read through getenv.
func S3FromEnv(endpoint string, getenv func(string) string) S3 {
	return S3{
		Endpoint: endpoint, AccessKeyID: getenv("AWS_ACCESS_KEY_ID"),
		SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY"), SessionToken: getenv("AWS_SESSION_TOKEN"),
	}
}

// checkPrefix is where the test objects of the checks are written (and removed at once).
const checkPrefix = ".mgmtapi-check/"

// defaultRegion signs requests for a bucket whose region is not given.
const defaultRegion = "us-east-1"

// Check checks the bucket for real: it must exist and accept a small test object (under
// checkPrefix), which is then removed. field names the bucket in the request, for errors.
//
// Errors: Invalid naming the field, the bucket and what failed (no such bucket, access denied,
// the endpoint unreachable, the object not written or not removed).
func (c S3) Check(ctx context.Context, field, bucket, region string) error {
	if region == "" {
		region = defaultRegion
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var creds aws.CredentialsProvider = aws.AnonymousCredentials{}
	if c.AccessKeyID != "" {
		creds = credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, c.SessionToken)
	}
	client := s3.New(s3.Options{
		Region: region, Credentials: creds, UsePathStyle: c.Endpoint != "",
		HTTPClient: &http.Client{Timeout: timeout},
		BaseEndpoint: func() *string {
			if c.Endpoint == "" {
				return nil
			}
			return aws.String(c.Endpoint)
		}(),
		RetryMaxAttempts: 1,
	})
	where := "AWS S3"
	if c.Endpoint != "" {
		where = "the S3 endpoint " + c.Endpoint
	}
	if _, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return apierror.Invalidf("%s: bucket %q failed the check at %s: %s", field, bucket, where, describe(err, "it does not exist"))
	}
	key := checkPrefix + uuid.NewString()
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader([]byte("mgmtapi archive bucket check\n")),
		ContentType: aws.String("text/plain"),
	}); err != nil {
		return apierror.Invalidf("%s: bucket %q exists but a test object could not be written to it at %s: %s", field, bucket, where, describe(err, "not found"))
	}
	if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
		return apierror.Invalidf("%s: bucket %q accepted a test object but it could not be removed (%s) at %s: %s", field, bucket, key, where, describe(err, "not found"))
	}
	return nil
}

// describe words an S3 failure for a person: the status's meaning (notFound for 404), or the
// service's error code, or why the endpoint could not be reached.
func describe(err error, notFound string) string {
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) && status.HTTPStatusCode() != 0 {
		code := ""
		var api smithy.APIError
		if errors.As(err, &api) && api.ErrorCode() != "" && api.ErrorCode() != "NotFound" && api.ErrorCode() != "Forbidden" {
			code = " (" + api.ErrorCode() + ")"
		}
		switch s := status.HTTPStatusCode(); s {
		case http.StatusNotFound:
			return notFound + code
		case http.StatusForbidden:
			return "access denied" + code + "; check the credentials and the bucket's policy"
		case http.StatusMovedPermanently, http.StatusBadRequest:
			return fmt.Sprintf("refused with status %d%s; check the region", s, code)
		default:
			return fmt.Sprintf("refused with status %d%s", s, code)
		}
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return "no answer in time"
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return "the endpoint could not be reached (" + opErr.Op + ": " + opErr.Err.Error() + ")"
	}
	return "the request failed"
}

// bucketName is the characters and ends of an S3 bucket name.
var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// ipAddress is a bucket name in the form of an IPv4 address, which S3 refuses.
var ipAddress = regexp.MustCompile(`^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$`)

// CheckBucketName checks name against S3's bucket naming rules.
//
// Errors: Invalid naming field and the rule broken.
func CheckBucketName(field, name string) error {
	switch {
	case name == "":
		return apierror.Invalidf("%s: required, the S3 bucket's name", field)
	case len(name) < 3 || len(name) > 63:
		return apierror.Invalidf("%s: %q must have 3 to 63 characters (it has %d)", field, apierror.Excerpt(name), len(name))
	case !bucketName.MatchString(name):
		return apierror.Invalidf("%s: %q may hold only lowercase letters, digits, dots and hyphens, and must begin and end with a letter or digit", field, apierror.Excerpt(name))
	case strings.Contains(name, ".."):
		return apierror.Invalidf("%s: %q must not hold two dots in a row", field, name)
	case strings.Contains(name, ".-") || strings.Contains(name, "-."):
		return apierror.Invalidf("%s: %q must not put a dot next to a hyphen", field, name)
	case ipAddress.MatchString(name):
		return apierror.Invalidf("%s: %q must not be written as an IP address", field, name)
	}
	for _, p := range []string{"xn--", "sthree-", "amzn-s3-demo-"} {
		if strings.HasPrefix(name, p) {
			return apierror.Invalidf("%s: %q must not begin with %q (reserved by S3)", field, name, p)
		}
	}
	for _, s := range []string{"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"} {
		if strings.HasSuffix(name, s) {
			return apierror.Invalidf("%s: %q must not end with %q (reserved by S3)", field, name, s)
		}
	}
	return nil
}

// region is the form of an AWS region name (us-east-1, eu-north-1, us-gov-west-1, cn-north-1).
var region = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)

// CheckRegion checks that r, when given, has the form of an AWS region name.
//
// Errors: Invalid naming field.
func CheckRegion(field, r string) error {
	if r != "" && !region.MatchString(r) {
		return apierror.Invalidf("%s: %q is not an AWS region name such as eu-west-1", field, apierror.Excerpt(r))
	}
	return nil
}

// gcsBucket is the characters and ends of a Google Cloud Storage bucket name.
var gcsBucket = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*[a-z0-9]$`)
