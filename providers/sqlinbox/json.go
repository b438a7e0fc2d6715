package sqlinbox

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jadpo/jadpo/internal/jsonstring"
)

// encodeRow builds a Row from one fetched row's raw values.
func (in *Inbox) encodeRow(m *pgtype.Map, fds []pgconn.FieldDescription, raw [][]byte, idCol int) (Row, error) {
	row := Row{Headers: map[string]string{}}
	body := make([]byte, 0, 256)
	body = append(body, '{')
	for i, fd := range fds {
		js, err := encodeColumn(m, fd.DataTypeOID, fd.Format, raw[i])
		if err != nil {
			return Row{}, in.errorf("fetch: column %q: %w", fd.Name, err)
		}
		if i > 0 {
			body = append(body, ',')
		}
		body = jsonstring.Append(body, fd.Name)
		body = append(body, ':')
		body = append(body, js...)
		if i == idCol {
			text, ok := jsonText(js)
			if !ok {
				return Row{}, in.errorf("fetch `%s`: a row with a NULL %q", in.fetch, fd.Name)
			}
			row.ID = text
		}
		if in.headers[fd.Name] {
			if text, ok := jsonText(js); ok {
				row.Headers[fd.Name] = text
			}
		}
	}
	row.Body = append(body, '}')
	return row, nil
}

// jsonText is a header's text: a JSON string unquoted, any other value as its JSON text; null
// gives false.
func jsonText(js []byte) (string, bool) {
	if string(js) == "null" {
		return "", false
	}
	if len(js) > 0 && js[0] == '"' {
		var s string
		if err := json.Unmarshal(js, &s); err == nil {
			return s, true
		}
	}
	return string(js), true
}

// encodeColumn gives one value's JSON by the package's rules (see the package doc).
func encodeColumn(m *pgtype.Map, oid uint32, format int16, raw []byte) ([]byte, error) {
	if raw == nil {
		return []byte("null"), nil
	}
	switch oid {
	case pgtype.JSONOID, pgtype.JSONBOID:
		// The raw text keeps the value exactly (pgx's own decoding would turn numbers into floats).
		src := raw
		if oid == pgtype.JSONBOID && format == pgtype.BinaryFormatCode {
			if len(src) == 0 || src[0] != 1 {
				return nil, fmt.Errorf("unknown jsonb binary version")
			}
			src = src[1:]
		}
		var out bytes.Buffer
		if err := json.Compact(&out, src); err != nil {
			return nil, fmt.Errorf("invalid json from the database: %w", err)
		}
		return out.Bytes(), nil
	}
	typ, ok := m.TypeForOID(oid)
	if !ok {
		// A type pgx does not know (enum, citext, a domain's own OID...) comes as text.
		if format == pgtype.TextFormatCode {
			return jsonstring.Append(nil, string(raw)), nil
		}
		return jsonstring.Append(nil, base64.StdEncoding.EncodeToString(raw)), nil
	}
	if ac, ok := typ.Codec.(*pgtype.ArrayCodec); ok {
		var arr pgtype.Array[any]
		if err := m.Scan(oid, format, raw, &arr); err != nil {
			return nil, err
		}
		elem := ac.ElementType.OID
		return encodeArray(nil, m, elem, arr.Elements, arr.Dims)
	}
	v, err := typ.Codec.DecodeValue(m, oid, format, raw)
	if err != nil {
		return nil, err
	}
	return encodeValue(nil, m, oid, v)
}

// encodeArray nests the flat elements by the array's dimensions.
func encodeArray(buf []byte, m *pgtype.Map, elem uint32, elems []any, dims []pgtype.ArrayDimension) ([]byte, error) {
	if len(dims) == 0 {
		return append(buf, "[]"...), nil
	}
	stride := 1
	for _, d := range dims[1:] {
		stride *= int(d.Length)
	}
	buf = append(buf, '[')
	for i := 0; i < int(dims[0].Length); i++ {
		if i > 0 {
			buf = append(buf, ',')
		}
		var err error
		if len(dims) == 1 {
			buf, err = encodeValue(buf, m, elem, elems[i])
		} else {
			buf, err = encodeArray(buf, m, elem, elems[i*stride:(i+1)*stride], dims[1:])
		}
		if err != nil {
			return nil, err
		}
	}
	return append(buf, ']'), nil
}

func appendFloat(buf []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(buf, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(buf, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(buf, `"-Infinity"`...)
	}
	return strconv.AppendFloat(buf, f, 'g', -1, bits)
}

// encodeValue encodes a value as pgx decoded it; oid tells date from timestamp and the fallback's type.
func encodeValue(buf []byte, m *pgtype.Map, oid uint32, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(buf, "null"...), nil
	case int16:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(buf, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(buf, x, 10), nil
	case uint32:
		return strconv.AppendUint(buf, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(buf, x, 10), nil
	case float32:
		return appendFloat(buf, float64(x), 32), nil
	case float64:
		return appendFloat(buf, x, 64), nil
	case pgtype.Numeric:
		js, err := x.MarshalJSON()
		if err != nil {
			return nil, err
		}
		return append(buf, js...), nil
	case *big.Int:
		return append(buf, x.String()...), nil
	case string:
		return jsonstring.Append(buf, x), nil
	case bool:
		return strconv.AppendBool(buf, x), nil
	case time.Time:
		if oid == pgtype.DateOID {
			return jsonstring.Append(buf, x.Format(time.DateOnly)), nil
		}
		return jsonstring.Append(buf, x.UTC().Format(time.RFC3339Nano)), nil
	case pgtype.InfinityModifier:
		return jsonstring.Append(buf, x.String()), nil
	case [16]byte:
		return jsonstring.Append(buf, uuidText(x)), nil
	case []byte:
		return jsonstring.Append(buf, base64.StdEncoding.EncodeToString(x)), nil
	case map[string]any, []any:
		// json inside an array, already decoded by pgx.
		js, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		return append(buf, js...), nil
	}
	// Another type pgx knows (interval, inet, point...): its PostgreSQL text.
	text, err := m.Encode(oid, pgtype.TextFormatCode, v, nil)
	if err != nil || text == nil {
		js, jerr := json.Marshal(v)
		if jerr != nil {
			return nil, fmt.Errorf("no JSON for a %T: %w", v, err)
		}
		return append(buf, js...), nil
	}
	return jsonstring.Append(buf, string(text)), nil
}

func uuidText(u [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}
