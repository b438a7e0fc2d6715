package ir

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// DecodeLiteral reads a plan literal (a Value's or an Expr's Literal, a
// config field's Default) as a Go value: whole numbers as int64, other
// numbers as json.Number, text, flags, lists and objects as encoding/json
// gives them. The runtime and the queue drivers read literals with it alike.
func DecodeLiteral(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the plan holds an invalid literal: %w", err)
	}
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i, nil
		}
	}
	return v, nil
}
