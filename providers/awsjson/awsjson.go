// Package awsjson is Protocol.aws_json: AWS's JSON protocol (version 1.0) as
// SQS, DynamoDB and others speak it.
//
// Every call is `POST /` to the connection's host with
// `Content-Type: application/x-amz-json-1.0`, the input as the JSON body (`{}`
// for an operation without input) and `X-Amz-Target: <target>.<Operation>`,
// the operation's lower_snake name in UpperCamelCase (receive_message ->
// AmazonSQS.ReceiveMessage). Members are the fields' names in UpperCamelCase
// (queue_url -> QueueUrl) unless a field gives `wire_name:`.
//
// A refusal's code is read at the package's `error_code:` (a member name, or a
// dotted path into the body) and turned into lower_snake_case by ErrorCode.
package awsjson

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/jadpo/jadpo/check/ir"
	"github.com/jadpo/jadpo/providers/wire"
)

// ContentType is the aws_json request and answer media type.
const ContentType = "application/x-amz-json-1.0"

// Protocol implements wire.Protocol for aws_json.
type Protocol struct {
	target    string
	endpoint  *url.URL
	errorCode string
}

// New makes the protocol for a provider whose `aws: { target: }` is target,
// whose `error_code:` is errorCode ("" means "__type"), sending to host (a
// URL; "https://" is assumed without a scheme).
func New(target, host, errorCode string) (*Protocol, error) {
	if target == "" {
		return nil, fmt.Errorf("aws_json needs `aws: { target: }`")
	}
	u, err := wire.ParseHost(host)
	if err != nil {
		return nil, err
	}
	if errorCode == "" {
		errorCode = "__type"
	}
	return &Protocol{target: target, endpoint: u, errorCode: errorCode}, nil
}

// Name is "aws_json".
func (p *Protocol) Name() string { return string(ir.ProtocolAWSJSON) }

// Naming names members in UpperCamelCase.
func (p *Protocol) Naming() wire.Naming { return ir.UpperCamel }

// Target is the X-Amz-Target value for an operation: "<target>.<Operation>".
func (p *Protocol) Target(operation string) string {
	return p.target + "." + ir.UpperCamel(operation)
}

// NewRequest builds `POST /` (the host's own path, when it has one) with the
// aws_json headers; a nil body is sent as `{}`.
func (p *Protocol) NewRequest(ctx context.Context, op *wire.Operation, body []byte) (*http.Request, error) {
	if body == nil {
		body = []byte("{}")
	}
	u := *p.endpoint
	if u.Path == "" {
		u.Path = "/"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header["Content-Type"] = []string{ContentType}
	req.Header["X-Amz-Target"] = []string{p.Target(op.Name)}
	return req, nil
}

// Refusal reads the code at error_code and the message at "message" (or
// "Message").
func (p *Protocol) Refusal(status int, header http.Header, body []byte) (string, string) {
	return ReadRefusal(p.errorCode, body)
}

// ReadRefusal reads a refusal body: the code at errorCode (a dotted path into
// the JSON body) through ErrorCode, and the message. Anything unreadable gives
// "" (the caller then uses http_<status>).
func ReadRefusal(errorCode string, body []byte) (code, message string) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", ""
	}
	if raw, ok := wire.Lookup(v, errorCode); ok {
		if s, ok := raw.(string); ok {
			code = ErrorCode(s)
		}
	}
	if m, ok := v.(map[string]any); ok {
		for _, k := range []string{"message", "Message"} {
			if s, ok := m[k].(string); ok {
				message = s
				break
			}
		}
	}
	return code, message
}

// ErrorCode turns AWS's error type into a refusal code:
//
//   - cut at the first ':' or ';' (REST-JSON's "Code:http://..." suffix, the
//     query-compatible header's "Code;Sender" fault);
//   - keep what follows the last '#' ("com.amazonaws.sqs#QueueDoesNotExist");
//   - otherwise keep what follows the last '.', so a dotted legacy code
//     ("AWS.SimpleQueueService.NonExistentQueue") gives its last word;
//   - then lower_snake_case by wire.ToLowerSnake.
//
// So "com.amazonaws.sqs#QueueDoesNotExist" is "queue_does_not_exist",
// "AWS.SimpleQueueService.NonExistentQueue" is "non_existent_queue" and
// "KMS.ThrottlingException" is "throttling_exception".
func ErrorCode(awsType string) string {
	s := awsType
	if i := strings.IndexAny(s, ":;"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '#'); i >= 0 {
		s = s[i+1:]
	} else if i := strings.LastIndexByte(s, '.'); i >= 0 {
		s = s[i+1:]
	}
	return wire.ToLowerSnake(s)
}
