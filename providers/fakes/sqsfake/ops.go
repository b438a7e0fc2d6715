package sqsfake

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jadpo/jadpo/providers/fakes/visibility"
)

type queue struct {
	name    string
	arn     string
	created time.Time
	changed time.Time
	attrs   queueAttrs
	// given holds the attributes as set, for CreateQueue's idempotency and
	// GetQueueAttributes.
	given map[string]string
	// held is the queue's messages, in send order (a dead-letter queue's in
	// the order moved in), delivered in that order.
	held   *visibility.Queue[*message]
	oldest time.Time // no message sent before this; zero for none
}

// add appends m to q; the caller holds f.mu.
func (q *queue) add(m *message) {
	q.held.Add(m)
	if q.oldest.IsZero() || m.sent.Before(q.oldest) {
		q.oldest = m.sent
	}
}

func (q *queue) purge() {
	q.held.Purge()
	q.oldest = time.Time{}
}

type queueAttrs struct {
	visibility time.Duration
	delay      time.Duration
	wait       time.Duration
	retention  time.Duration
	maxSize    int
	redrive    *redrivePolicy
}

type redrivePolicy struct {
	deadLetterTargetArn string
	maxReceiveCount     int
}

var defaultAttrs = queueAttrs{
	visibility: 30 * time.Second,
	retention:  4 * 24 * time.Hour,
	maxSize:    1 << 20,
}

// message is a message the fake holds: ID, VisibleAt, Deliveries (its
// receive count) and Handle (the latest receipt handle; "" before the first
// receive) are the queue's (visibility.Message).
type message struct {
	visibility.Message
	body         string
	md5          string
	attrs        map[string]messageAttributeValue
	attrsMD5     string
	sent         time.Time
	firstReceive time.Time
	sourceArn    string // set when moved to a dead-letter queue
}

type messageAttributeValue struct {
	DataType         string   `json:"DataType"`
	StringValue      *string  `json:"StringValue,omitempty"`
	BinaryValue      []byte   `json:"BinaryValue,omitempty"`
	StringListValues []string `json:"StringListValues,omitempty"`
	BinaryListValues [][]byte `json:"BinaryListValues,omitempty"`
}

// ---- inputs and outputs (members as SQS's JSON API names them) ----

type createQueueInput struct {
	QueueName  string            `json:"QueueName"`
	Attributes map[string]string `json:"Attributes"`
	Tags       map[string]string `json:"tags"`
}

type queueURLOutput struct {
	QueueUrl string `json:"QueueUrl"`
}

type getQueueURLInput struct {
	QueueName              string `json:"QueueName"`
	QueueOwnerAWSAccountId string `json:"QueueOwnerAWSAccountId"`
}

type listQueuesInput struct {
	QueueNamePrefix string `json:"QueueNamePrefix"`
	MaxResults      *int   `json:"MaxResults"`
	NextToken       string `json:"NextToken"`
}

type listQueuesOutput struct {
	QueueUrls []string `json:"QueueUrls,omitempty"`
}

type queueURLInput struct {
	QueueUrl string `json:"QueueUrl"`
}

type getQueueAttributesInput struct {
	QueueUrl       string   `json:"QueueUrl"`
	AttributeNames []string `json:"AttributeNames"`
}

type attributesOutput struct {
	Attributes map[string]string `json:"Attributes,omitempty"`
}

type setQueueAttributesInput struct {
	QueueUrl   string            `json:"QueueUrl"`
	Attributes map[string]string `json:"Attributes"`
}

type sendMessageInput struct {
	QueueUrl               string                           `json:"QueueUrl"`
	MessageBody            *string                          `json:"MessageBody"`
	DelaySeconds           *int                             `json:"DelaySeconds"`
	MessageAttributes      map[string]messageAttributeValue `json:"MessageAttributes"`
	MessageDeduplicationId string                           `json:"MessageDeduplicationId"`
	MessageGroupId         string                           `json:"MessageGroupId"`
}

type sendMessageOutput struct {
	MessageId              string `json:"MessageId"`
	MD5OfMessageBody       string `json:"MD5OfMessageBody"`
	MD5OfMessageAttributes string `json:"MD5OfMessageAttributes,omitempty"`
}

type sendMessageBatchInput struct {
	QueueUrl string `json:"QueueUrl"`
	Entries  []struct {
		Id                string                           `json:"Id"`
		MessageBody       *string                          `json:"MessageBody"`
		DelaySeconds      *int                             `json:"DelaySeconds"`
		MessageAttributes map[string]messageAttributeValue `json:"MessageAttributes"`
	} `json:"Entries"`
}

type batchResultErrorEntry struct {
	Id          string `json:"Id"`
	SenderFault bool   `json:"SenderFault"`
	Code        string `json:"Code"`
	Message     string `json:"Message,omitempty"`
}

type sendMessageBatchResultEntry struct {
	Id                     string `json:"Id"`
	MessageId              string `json:"MessageId"`
	MD5OfMessageBody       string `json:"MD5OfMessageBody"`
	MD5OfMessageAttributes string `json:"MD5OfMessageAttributes,omitempty"`
}

type sendMessageBatchOutput struct {
	Successful []sendMessageBatchResultEntry `json:"Successful"`
	Failed     []batchResultErrorEntry       `json:"Failed"`
}

type receiveMessageInput struct {
	QueueUrl                    string   `json:"QueueUrl"`
	MaxNumberOfMessages         *int     `json:"MaxNumberOfMessages"`
	WaitTimeSeconds             *int     `json:"WaitTimeSeconds"`
	VisibilityTimeout           *int     `json:"VisibilityTimeout"`
	AttributeNames              []string `json:"AttributeNames"`
	MessageSystemAttributeNames []string `json:"MessageSystemAttributeNames"`
	MessageAttributeNames       []string `json:"MessageAttributeNames"`
	ReceiveRequestAttemptId     string   `json:"ReceiveRequestAttemptId"`
}

type messageOutput struct {
	MessageId              string                           `json:"MessageId"`
	ReceiptHandle          string                           `json:"ReceiptHandle"`
	MD5OfBody              string                           `json:"MD5OfBody"`
	Body                   string                           `json:"Body"`
	Attributes             map[string]string                `json:"Attributes,omitempty"`
	MD5OfMessageAttributes string                           `json:"MD5OfMessageAttributes,omitempty"`
	MessageAttributes      map[string]messageAttributeValue `json:"MessageAttributes,omitempty"`
}

type receiveMessageOutput struct {
	Messages []messageOutput `json:"Messages,omitempty"`
}

type deleteMessageInput struct {
	QueueUrl      string `json:"QueueUrl"`
	ReceiptHandle string `json:"ReceiptHandle"`
}

type deleteMessageBatchInput struct {
	QueueUrl string `json:"QueueUrl"`
	Entries  []struct {
		Id            string `json:"Id"`
		ReceiptHandle string `json:"ReceiptHandle"`
	} `json:"Entries"`
}

type idEntry struct {
	Id string `json:"Id"`
}

type deleteMessageBatchOutput struct {
	Successful []idEntry               `json:"Successful"`
	Failed     []batchResultErrorEntry `json:"Failed"`
}

type changeMessageVisibilityInput struct {
	QueueUrl          string `json:"QueueUrl"`
	ReceiptHandle     string `json:"ReceiptHandle"`
	VisibilityTimeout *int   `json:"VisibilityTimeout"`
}

type empty struct{}

// ---- queues ----

var queueNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

func (f *Fake) arn(name string) string {
	return "arn:aws:sqs:" + f.opts.Region + ":" + f.opts.AccountID + ":" + name
}

func (f *Fake) queueURL(base, name string) string {
	return base + "/" + f.opts.AccountID + "/" + name
}

// queueName reads a queue URL's last path segment.
func queueName(queueURL string) (string, *apiError) {
	if queueURL == "" {
		return "", missingParameter("QueueUrl")
	}
	i := strings.LastIndexByte(strings.TrimSuffix(queueURL, "/"), '/')
	if i < 0 {
		return "", queueDoesNotExist()
	}
	return strings.TrimSuffix(queueURL, "/")[i+1:], nil
}

// lookup finds a queue by URL; the caller holds f.mu.
func (f *Fake) lookup(queueURL string) (*queue, *apiError) {
	name, e := queueName(queueURL)
	if e != nil {
		return nil, e
	}
	q, ok := f.queues[name]
	if !ok {
		return nil, queueDoesNotExist()
	}
	f.expire(q)
	return q, nil
}

// expire drops messages older than the queue's retention period. It looks
// at each message only when the oldest one is due.
func (f *Fake) expire(q *queue) {
	cutoff := f.clock.Now().Add(-q.attrs.retention)
	if q.oldest.IsZero() || !q.oldest.Before(cutoff) {
		return
	}
	q.oldest = time.Time{}
	q.held.DeleteIf(func(m *message) bool {
		if m.sent.Before(cutoff) {
			return true
		}
		if q.oldest.IsZero() || m.sent.Before(q.oldest) {
			q.oldest = m.sent
		}
		return false
	})
}

func (f *Fake) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

var passThroughAttributes = map[string]bool{
	"Policy": true, "RedriveAllowPolicy": true, "KmsMasterKeyId": true,
	"KmsDataKeyReusePeriodSeconds": true, "SqsManagedSseEnabled": true,
}

func intAttribute(name, v string, lo, hi int) (int, *apiError) {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, sqsError("InvalidAttributeValue", "", "Invalid value for the parameter %s.", name)
	}
	return n, nil
}

// intAttributes are the whole-number attributes: their bounds and where each goes.
var intAttributes = map[string]struct {
	lo, hi int
	set    func(a *queueAttrs, n int)
}{
	"VisibilityTimeout":             {0, 43200, func(a *queueAttrs, n int) { a.visibility = time.Duration(n) * time.Second }},
	"DelaySeconds":                  {0, 900, func(a *queueAttrs, n int) { a.delay = time.Duration(n) * time.Second }},
	"ReceiveMessageWaitTimeSeconds": {0, 20, func(a *queueAttrs, n int) { a.wait = time.Duration(n) * time.Second }},
	"MessageRetentionPeriod":        {60, 1209600, func(a *queueAttrs, n int) { a.retention = time.Duration(n) * time.Second }},
	"MaximumMessageSize":            {1024, 1 << 20, func(a *queueAttrs, n int) { a.maxSize = n }},
}

// applyAttributes validates given attributes over base.
func applyAttributes(base queueAttrs, given map[string]string) (queueAttrs, *apiError) {
	a := base
	names := make([]string, 0, len(given))
	for k := range given {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := given[k]
		if ia, ok := intAttributes[k]; ok {
			n, e := intAttribute(k, v, ia.lo, ia.hi)
			if e != nil {
				return a, e
			}
			ia.set(&a, n)
			continue
		}
		switch k {
		case "RedrivePolicy":
			if v == "" {
				a.redrive = nil
				continue
			}
			var raw struct {
				DeadLetterTargetArn string          `json:"deadLetterTargetArn"`
				MaxReceiveCount     json.RawMessage `json:"maxReceiveCount"`
			}
			if err := json.Unmarshal([]byte(v), &raw); err != nil || raw.DeadLetterTargetArn == "" {
				return a, sqsError("InvalidAttributeValue", "", "Value for the parameter RedrivePolicy is invalid. Reason: Redrive policy is not a valid JSON map with deadLetterTargetArn and maxReceiveCount.")
			}
			count := strings.Trim(string(raw.MaxReceiveCount), `"`)
			n, err := strconv.Atoi(count)
			if err != nil || n < 1 || n > 1000 {
				return a, sqsError("InvalidAttributeValue", "", "Value for the parameter RedrivePolicy is invalid. Reason: Invalid value for maxReceiveCount: must be an integer from 1 to 1000.")
			}
			a.redrive = &redrivePolicy{deadLetterTargetArn: raw.DeadLetterTargetArn, maxReceiveCount: n}
		case "FifoQueue":
			if v == "true" {
				return a, sqsError("InvalidAttributeValue", "", "The fake has no FIFO queues.")
			}
		default:
			if !passThroughAttributes[k] {
				return a, sqsError("InvalidAttributeName", "", "Unknown Attribute %s.", k)
			}
		}
	}
	return a, nil
}

func (f *Fake) createQueue(base string, in *createQueueInput) (any, *apiError) {
	if in.QueueName == "" {
		return nil, missingParameter("QueueName")
	}
	if !queueNameRE.MatchString(in.QueueName) {
		return nil, invalidParameter("Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length")
	}
	attrs, e := applyAttributes(defaultAttrs, in.Attributes)
	if e != nil {
		return nil, e
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if q, ok := f.queues[in.QueueName]; ok {
		for k, v := range in.Attributes {
			if q.given[k] != v {
				return nil, sqsError("QueueNameExists", "QueueAlreadyExists",
					"A queue already exists with the same name and a different value for attribute %s", k)
			}
		}
		return queueURLOutput{QueueUrl: f.queueURL(base, q.name)}, nil
	}
	now := f.clock.Now()
	given := make(map[string]string, len(in.Attributes))
	for k, v := range in.Attributes {
		given[k] = v
	}
	f.queues[in.QueueName] = &queue{name: in.QueueName, arn: f.arn(in.QueueName), created: now, changed: now, attrs: attrs, given: given,
		held: visibility.New[*message](visibility.SendOrder)}
	return queueURLOutput{QueueUrl: f.queueURL(base, in.QueueName)}, nil
}

func (f *Fake) getQueueURL(base string, in *getQueueURLInput) (any, *apiError) {
	if in.QueueName == "" {
		return nil, missingParameter("QueueName")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.queues[in.QueueName]; !ok {
		return nil, queueDoesNotExist()
	}
	return queueURLOutput{QueueUrl: f.queueURL(base, in.QueueName)}, nil
}

func (f *Fake) listQueues(base string, in *listQueuesInput) (any, *apiError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var names []string
	for name := range f.queues {
		if strings.HasPrefix(name, in.QueueNamePrefix) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	limit := 1000
	if in.MaxResults != nil {
		if *in.MaxResults < 1 || *in.MaxResults > 1000 {
			return nil, invalidParameter("Value %d for parameter MaxResults is invalid. Reason: must be between 1 and 1000.", *in.MaxResults)
		}
		limit = *in.MaxResults
	}
	var out listQueuesOutput
	for _, n := range names {
		if len(out.QueueUrls) == limit {
			break
		}
		out.QueueUrls = append(out.QueueUrls, f.queueURL(base, n))
	}
	return out, nil
}

func (f *Fake) deleteQueue(in *queueURLInput) (any, *apiError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, e := f.lookup(in.QueueUrl)
	if e != nil {
		return nil, e
	}
	delete(f.queues, q.name)
	return empty{}, nil
}

func (f *Fake) purgeQueue(in *queueURLInput) (any, *apiError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, e := f.lookup(in.QueueUrl)
	if e != nil {
		return nil, e
	}
	q.purge()
	return empty{}, nil
}

// counts are the queue's visible, in-flight and delayed messages now.
func (f *Fake) counts(q *queue) (visible, inFlight, delayed int) {
	c := q.held.Count(f.clock.Now())
	return c.Visible, c.InFlight, c.Delayed
}

func (f *Fake) getQueueAttributes(in *getQueueAttributesInput) (any, *apiError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, e := f.lookup(in.QueueUrl)
	if e != nil {
		return nil, e
	}
	visible, inFlight, delayed := f.counts(q)
	all := map[string]string{
		"ApproximateNumberOfMessages":           strconv.Itoa(visible),
		"ApproximateNumberOfMessagesNotVisible": strconv.Itoa(inFlight),
		"ApproximateNumberOfMessagesDelayed":    strconv.Itoa(delayed),
		"CreatedTimestamp":                      strconv.FormatInt(q.created.Unix(), 10),
		"LastModifiedTimestamp":                 strconv.FormatInt(q.changed.Unix(), 10),
		"DelaySeconds":                          strconv.Itoa(int(q.attrs.delay / time.Second)),
		"MaximumMessageSize":                    strconv.Itoa(q.attrs.maxSize),
		"MessageRetentionPeriod":                strconv.Itoa(int(q.attrs.retention / time.Second)),
		"QueueArn":                              q.arn,
		"ReceiveMessageWaitTimeSeconds":         strconv.Itoa(int(q.attrs.wait / time.Second)),
		"VisibilityTimeout":                     strconv.Itoa(int(q.attrs.visibility / time.Second)),
		"SqsManagedSseEnabled":                  "false",
	}
	for k, v := range q.given {
		if passThroughAttributes[k] || k == "RedrivePolicy" {
			all[k] = v
		}
	}
	if q.attrs.redrive == nil {
		delete(all, "RedrivePolicy")
	}
	out := attributesOutput{Attributes: map[string]string{}}
	for _, name := range in.AttributeNames {
		if name == "All" {
			out.Attributes = all
			break
		}
		v, ok := all[name]
		if !ok {
			if _, known := defaultQueueAttributeNames[name]; known {
				continue
			}
			return nil, sqsError("InvalidAttributeName", "", "Unknown Attribute %s.", name)
		}
		out.Attributes[name] = v
	}
	return out, nil
}

var defaultQueueAttributeNames = map[string]bool{
	"Policy": true, "RedrivePolicy": true, "RedriveAllowPolicy": true, "KmsMasterKeyId": true,
	"KmsDataKeyReusePeriodSeconds": true, "FifoQueue": true, "ContentBasedDeduplication": true,
	"DeduplicationScope": true, "FifoThroughputLimit": true,
}

func (f *Fake) setQueueAttributes(in *setQueueAttributesInput) (any, *apiError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, e := f.lookup(in.QueueUrl)
	if e != nil {
		return nil, e
	}
	attrs, e := applyAttributes(q.attrs, in.Attributes)
	if e != nil {
		return nil, e
	}
	q.attrs = attrs
	for k, v := range in.Attributes {
		q.given[k] = v
	}
	q.changed = f.clock.Now()
	f.notify()
	return empty{}, nil
}

// ---- messages ----

// validBody reports whether s holds only the characters SQS allows.
func validBody(s string) bool {
	for _, r := range s {
		switch {
		case r == 0x9 || r == 0xA || r == 0xD:
		case r >= 0x20 && r <= 0xD7FF:
		case r >= 0xE000 && r <= 0xFFFD:
		case r >= 0x10000 && r <= 0x10FFFF:
		default:
			return false
		}
	}
	return utf8.ValidString(s)
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// attributesMD5 is MD5OfMessageAttributes, computed as SQS documents it:
// for each attribute by name, its name, data type, transport type (1 text, 2
// binary) and value, each length-prefixed with 4 big-endian bytes.
func attributesMD5(attrs map[string]messageAttributeValue) (string, *apiError) {
	if len(attrs) == 0 {
		return "", nil
	}
	if len(attrs) > 10 {
		return "", invalidParameter("Number of message attributes [%d] exceeds the allowed maximum [10].", len(attrs))
	}
	names := make([]string, 0, len(attrs))
	for k := range attrs {
		names = append(names, k)
	}
	sort.Strings(names)
	h := md5.New()
	put := func(b []byte) {
		var l [4]byte
		binary.BigEndian.PutUint32(l[:], uint32(len(b)))
		h.Write(l[:])
		h.Write(b)
	}
	for _, name := range names {
		v := attrs[name]
		if name == "" || len(name) > 256 {
			return "", invalidParameter("Message attribute name is invalid.")
		}
		base, _, _ := strings.Cut(v.DataType, ".")
		put([]byte(name))
		put([]byte(v.DataType))
		switch base {
		case "String", "Number":
			if v.StringValue == nil {
				return "", invalidParameter("Message (user) attribute '%s' must contain a non-empty value of type '%s'.", name, v.DataType)
			}
			h.Write([]byte{1})
			put([]byte(*v.StringValue))
		case "Binary":
			if v.BinaryValue == nil {
				return "", invalidParameter("Message (user) attribute '%s' must contain a non-empty value of type '%s'.", name, v.DataType)
			}
			h.Write([]byte{2})
			put(v.BinaryValue)
		default:
			return "", invalidParameter("The type of message (user) attribute '%s' is invalid.", name)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// newMessage validates and builds a message for q; the caller holds f.mu.
func (f *Fake) newMessage(q *queue, body *string, delaySeconds *int, attrs map[string]messageAttributeValue) (*message, *apiError) {
	if body == nil {
		return nil, missingParameter("MessageBody")
	}
	if *body == "" {
		return nil, invalidParameter("The request must contain a non-empty message body.")
	}
	if !validBody(*body) {
		return nil, sqsError("InvalidMessageContents", "", "Invalid binary character in the message body.")
	}
	if len(*body) > q.attrs.maxSize {
		return nil, invalidParameter("One or more parameters are invalid. Reason: Message must be shorter than %d bytes.", q.attrs.maxSize)
	}
	delay := q.attrs.delay
	if delaySeconds != nil {
		if *delaySeconds < 0 || *delaySeconds > 900 {
			return nil, invalidParameter("Value %d for parameter DelaySeconds is invalid. Reason: must be between 0 and 900, if provided.", *delaySeconds)
		}
		delay = time.Duration(*delaySeconds) * time.Second
	}
	attrsMD5, e := attributesMD5(attrs)
	if e != nil {
		return nil, e
	}
	now := f.clock.Now()
	return &message{
		Message: visibility.Message{ID: newID(), VisibleAt: now.Add(delay)},
		body:    *body, md5: md5Hex(*body), attrs: attrs, attrsMD5: attrsMD5, sent: now,
	}, nil
}

func (f *Fake) sendMessage(in *sendMessageInput) (any, *apiError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, e := f.lookup(in.QueueUrl)
	if e != nil {
		return nil, e
	}
	m, e := f.newMessage(q, in.MessageBody, in.DelaySeconds, in.MessageAttributes)
	if e != nil {
		return nil, e
	}
	q.add(m)
	f.notify()
	return sendMessageOutput{MessageId: m.ID, MD5OfMessageBody: m.md5, MD5OfMessageAttributes: m.attrsMD5}, nil
}

var batchIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

// checkBatch applies SQS's rules for batch entry ids.
func checkBatch(ids []string) *apiError {
	if len(ids) == 0 {
		return sqsError("EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest", "There should be at least one SendMessageBatchRequestEntry in the request.")
	}
	if len(ids) > 10 {
		return sqsError("TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "Maximum number of entries per request are 10. You have sent %d.", len(ids))
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if !batchIDRE.MatchString(id) {
			return sqsError("InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId", "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.")
		}
		if seen[id] {
			return sqsError("BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "Id %s repeated.", id)
		}
		seen[id] = true
	}
	return nil
}

func (f *Fake) sendMessageBatch(in *sendMessageBatchInput) (any, *apiError) {
	ids := make([]string, len(in.Entries))
	total := 0
	for i, e := range in.Entries {
		ids[i] = e.Id
		if e.MessageBody != nil {
			total += len(*e.MessageBody)
		}
	}
	if e := checkBatch(ids); e != nil {
		return nil, e
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	q, e := f.lookup(in.QueueUrl)
	if e != nil {
		return nil, e
	}
	if total > q.attrs.maxSize {
		return nil, sqsError("BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong", "Batch requests cannot be longer than %d bytes.", q.attrs.maxSize)
	}
	out := sendMessageBatchOutput{Successful: []sendMessageBatchResultEntry{}, Failed: []batchResultErrorEntry{}}
	for _, entry := range in.Entries {
		m, e := f.newMessage(q, entry.MessageBody, entry.DelaySeconds, entry.MessageAttributes)
		if e != nil {
			out.Failed = append(out.Failed, batchResultErrorEntry{Id: entry.Id, SenderFault: true, Code: e.queryCode, Message: e.message})
			continue
		}
		q.add(m)
		out.Successful = append(out.Successful, sendMessageBatchResultEntry{Id: entry.Id, MessageId: m.ID, MD5OfMessageBody: m.md5, MD5OfMessageAttributes: m.attrsMD5})
	}
	f.notify()
	return out, nil
}

// receipt handles: base64url of "v1|<queue>|<message id>|<receive number>".

func (f *Fake) newHandle(q *queue, m *message) string {
	f.seq++
	return base64.RawURLEncoding.EncodeToString([]byte("v1|" + q.name + "|" + m.ID + "|" + strconv.FormatUint(f.seq, 10)))
}

func parseHandle(h string) (queueName, messageID string, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(h)
	if err != nil {
		return "", "", false
	}
	parts := strings.Split(string(raw), "|")
	if len(parts) != 4 || parts[0] != "v1" || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	if _, err := strconv.ParseUint(parts[3], 10, 64); err != nil {
		return "", "", false
	}
	return parts[1], parts[2], true
}

func invalidHandle(h string) *apiError {
	return sqsError("ReceiptHandleIsInvalid", "", "The input receipt handle %q is not a valid receipt handle.", h)
}

// take receives up to max visible messages of q, moving to the dead-letter
// queue those received maxReceiveCount times already; it also reports when
// the next message becomes visible (zero when none waits). The caller holds
// f.mu.
func (f *Fake) take(q *queue, max int, lease time.Duration) ([]*message, time.Time) {
	f.expire(q)
	now := f.clock.Now()
	movedAny := false
	limit := func(m *message) bool {
		rp := q.attrs.redrive
		if rp == nil || m.Deliveries < rp.maxReceiveCount {
			return false
		}
		dlq := f.queueByArn(rp.deadLetterTargetArn)
		if dlq == nil || dlq == q {
			return false
		}
		// A copy: q keeps m, gone, until it is tidied.
		moved := *m
		moved.sourceArn = q.arn
		moved.VisibleAt = now
		moved.Handle = ""
		dlq.add(&moved)
		movedAny = true
		return true
	}
	got, next := q.held.Receive(now, max, lease, limit, func(m *message) string { return f.newHandle(q, m) })
	for _, m := range got {
		if m.firstReceive.IsZero() {
			m.firstReceive = now
		}
	}
	if movedAny {
		f.notify()
	}
	return got, next
}

func (f *Fake) queueByArn(arn string) *queue {
	for _, q := range f.queues {
		if q.arn == arn {
			return q
		}
	}
	return nil
}

var systemAttributeNames = []string{
	"ApproximateFirstReceiveTimestamp", "ApproximateReceiveCount", "SenderId", "SentTimestamp",
	"DeadLetterQueueSourceArn",
}

func intParam(name string, v *int, def, lo, hi int) (int, *apiError) {
	if v == nil {
		return def, nil
	}
	if *v < lo || *v > hi {
		return 0, invalidParameter("Value %d for parameter %s is invalid. Reason: Must be between %d and %d, if provided.", *v, name, lo, hi)
	}
	return *v, nil
}

func (f *Fake) receiveMessage(r *http.Request, in *receiveMessageInput) (any, *apiError) {
	maxN, e := intParam("MaxNumberOfMessages", in.MaxNumberOfMessages, 1, 1, 10)
	if e != nil {
		return nil, e
	}
	f.mu.Lock()
	q, e := f.lookup(in.QueueUrl)
	if e != nil {
		f.mu.Unlock()
		return nil, e
	}
	defWait, defVis := int(q.attrs.wait/time.Second), int(q.attrs.visibility/time.Second)
	f.mu.Unlock()
	wait, e := intParam("WaitTimeSeconds", in.WaitTimeSeconds, defWait, 0, 20)
	if e != nil {
		return nil, e
	}
	vis, e := intParam("VisibilityTimeout", in.VisibilityTimeout, defVis, 0, 43200)
	if e != nil {
		return nil, e
	}
	wantAttrs := map[string]bool{}
	for _, n := range append(in.AttributeNames, in.MessageSystemAttributeNames...) {
		if n == "All" {
			for _, a := range systemAttributeNames {
				wantAttrs[a] = true
			}
			continue
		}
		wantAttrs[n] = true
	}

	ctx := r.Context()
	deadline := f.clock.Now().Add(time.Duration(wait) * time.Second)
	for {
		f.mu.Lock()
		q, e := f.lookup(in.QueueUrl)
		if e != nil {
			f.mu.Unlock()
			return nil, e
		}
		got, next := f.take(q, maxN, time.Duration(vis)*time.Second)
		out := receiveMessageOutput{}
		for _, m := range got {
			out.Messages = append(out.Messages, f.messageOutput(m, wantAttrs, in.MessageAttributeNames))
		}
		changed := f.changed
		f.mu.Unlock()
		if len(got) > 0 {
			return out, nil
		}
		now := f.clock.Now()
		if !now.Before(deadline) {
			return out, nil
		}
		d := deadline.Sub(now)
		if !next.IsZero() && next.Sub(now) < d {
			d = next.Sub(now)
		}
		timer, stop := f.clock.Timer(d)
		select {
		case <-changed:
		case <-timer:
		case <-ctx.Done():
			stop()
			return out, nil
		}
		stop()
	}
}

func (f *Fake) messageOutput(m *message, wantAttrs map[string]bool, attrNames []string) messageOutput {
	o := messageOutput{MessageId: m.ID, ReceiptHandle: m.Handle, MD5OfBody: m.md5, Body: m.body}
	if len(wantAttrs) > 0 {
		all := map[string]string{
			"ApproximateReceiveCount":          strconv.Itoa(m.Deliveries),
			"ApproximateFirstReceiveTimestamp": strconv.FormatInt(m.firstReceive.UnixMilli(), 10),
			"SentTimestamp":                    strconv.FormatInt(m.sent.UnixMilli(), 10),
			"SenderId":                         f.opts.AccountID,
		}
		if m.sourceArn != "" {
			all["DeadLetterQueueSourceArn"] = m.sourceArn
		}
		o.Attributes = map[string]string{}
		for n := range wantAttrs {
			if v, ok := all[n]; ok {
				o.Attributes[n] = v
			}
		}
		if len(o.Attributes) == 0 {
			o.Attributes = nil
		}
	}
	if len(m.attrs) > 0 && len(attrNames) > 0 {
		sel := map[string]messageAttributeValue{}
		for name, v := range m.attrs {
			for _, want := range attrNames {
				if want == "All" || want == ".*" || want == name ||
					(strings.HasSuffix(want, ".*") && strings.HasPrefix(name, strings.TrimSuffix(want, "*"))) {
					sel[name] = v
					break
				}
			}
		}
		if len(sel) > 0 {
			o.MessageAttributes = sel
			o.MD5OfMessageAttributes, _ = attributesMD5(sel)
		}
	}
	return o
}

// findMessage finds a receipt handle's message on q (nil when it is gone);
// the caller holds f.mu.
func findMessage(q *queue, handle string) (*message, *apiError) {
	qn, id, ok := parseHandle(handle)
	if !ok || qn != q.name {
		return nil, invalidHandle(handle)
	}
	m, _ := q.held.Lookup(id)
	return m, nil
}

// deleteByHandle deletes the message of a receipt handle. A stale handle (the
// message was received again since) succeeds without deleting, as SQS
// documents; a message already gone succeeds too.
func (f *Fake) deleteByHandle(q *queue, handle string) *apiError {
	if handle == "" {
		return missingParameter("ReceiptHandle")
	}
	m, e := findMessage(q, handle)
	if e != nil {
		return e
	}
	if m == nil || m.Handle != handle {
		return nil
	}
	q.held.Delete(m)
	return nil
}

func (f *Fake) deleteMessage(in *deleteMessageInput) (any, *apiError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, e := f.lookup(in.QueueUrl)
	if e != nil {
		return nil, e
	}
	if e := f.deleteByHandle(q, in.ReceiptHandle); e != nil {
		return nil, e
	}
	return empty{}, nil
}

func (f *Fake) deleteMessageBatch(in *deleteMessageBatchInput) (any, *apiError) {
	ids := make([]string, len(in.Entries))
	for i, e := range in.Entries {
		ids[i] = e.Id
	}
	if e := checkBatch(ids); e != nil {
		return nil, e
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	q, e := f.lookup(in.QueueUrl)
	if e != nil {
		return nil, e
	}
	out := deleteMessageBatchOutput{Successful: []idEntry{}, Failed: []batchResultErrorEntry{}}
	for _, entry := range in.Entries {
		if f.faults.entryFails("DeleteMessageBatch") {
			out.Failed = append(out.Failed, batchResultErrorEntry{Id: entry.Id, SenderFault: false, Code: "InternalError", Message: "The fake failed this entry (FaultEntryFailed)."})
			continue
		}
		if e := f.deleteByHandle(q, entry.ReceiptHandle); e != nil {
			out.Failed = append(out.Failed, batchResultErrorEntry{Id: entry.Id, SenderFault: true, Code: e.queryCode, Message: e.message})
			continue
		}
		out.Successful = append(out.Successful, idEntry{Id: entry.Id})
	}
	return out, nil
}

func (f *Fake) changeMessageVisibility(in *changeMessageVisibilityInput) (any, *apiError) {
	if in.VisibilityTimeout == nil {
		return nil, missingParameter("VisibilityTimeout")
	}
	vis, e := intParam("VisibilityTimeout", in.VisibilityTimeout, 0, 0, 43200)
	if e != nil {
		return nil, e
	}
	if in.ReceiptHandle == "" {
		return nil, missingParameter("ReceiptHandle")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	q, e := f.lookup(in.QueueUrl)
	if e != nil {
		return nil, e
	}
	m, e := findMessage(q, in.ReceiptHandle)
	if e != nil {
		return nil, e
	}
	if m == nil {
		return nil, invalidParameter("Value %s for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.", in.ReceiptHandle)
	}
	if m.Handle != in.ReceiptHandle {
		return nil, invalidParameter("Value %s for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.", in.ReceiptHandle)
	}
	now := f.clock.Now()
	if !m.InFlight(now) {
		return nil, sqsError("MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight", "The message referred to is not in flight.")
	}
	q.held.SetVisibleAt(m, now.Add(time.Duration(vis)*time.Second))
	f.notify()
	return empty{}, nil
}

// ---- direct access, for tests and demos ----

// QueueStats counts a queue's messages.
type QueueStats struct {
	Visible  int // may be received now
	InFlight int // received and not yet visible again
	Delayed  int // sent with a delay not yet over
}

// Stats counts the messages of the queue named name.
func (f *Fake) Stats(name string) (QueueStats, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, ok := f.queues[name]
	if !ok {
		return QueueStats{}, false
	}
	f.expire(q)
	v, i, d := f.counts(q)
	return QueueStats{Visible: v, InFlight: i, Delayed: d}, true
}

// MessageInfo describes a message held by the fake.
type MessageInfo struct {
	ID           string
	Body         string
	ReceiveCount int
	Visible      bool
	SentAt       time.Time
	// SourceQueueArn is the queue a dead-letter queue's message came from.
	SourceQueueArn string
}

// Messages lists the messages of the queue named name, in send order (a
// dead-letter queue's in the order they were moved).
func (f *Fake) Messages(name string) []MessageInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, ok := f.queues[name]
	if !ok {
		return nil
	}
	f.expire(q)
	now := f.clock.Now()
	out := make([]MessageInfo, 0, q.held.Len())
	for m := range q.held.All() {
		out = append(out, MessageInfo{ID: m.ID, Body: m.body, ReceiveCount: m.Deliveries,
			Visible: !m.InFlight(now), SentAt: m.sent, SourceQueueArn: m.sourceArn})
	}
	return out
}

// QueueURL is the URL of the queue named name under Options.BaseURL
// ("http://127.0.0.1" without one; the fake reads only a URL's last segment).
func (f *Fake) QueueURL(name string) string { return f.queueURL(f.defaultBase(), name) }

func (f *Fake) defaultBase() string {
	if f.opts.BaseURL == "" {
		return "http://127.0.0.1"
	}
	return strings.TrimSuffix(f.opts.BaseURL, "/")
}

// QueueArn is the ARN of the queue named name, for a RedrivePolicy.
func (f *Fake) QueueArn(name string) string { return f.arn(name) }

// CreateQueue creates a queue directly (as CreateQueue does) and returns its
// URL.
func (f *Fake) CreateQueue(name string, attributes map[string]string) (string, error) {
	out, e := f.createQueue(f.defaultBase(), &createQueueInput{QueueName: name, Attributes: attributes})
	if e != nil {
		return "", e
	}
	return out.(queueURLOutput).QueueUrl, nil
}

// SendMessage sends body to the queue named name directly and returns the
// message id.
func (f *Fake) SendMessage(name, body string) (string, error) {
	out, e := f.sendMessage(&sendMessageInput{QueueUrl: f.QueueURL(name), MessageBody: &body})
	if e != nil {
		return "", e
	}
	return out.(sendMessageOutput).MessageId, nil
}
