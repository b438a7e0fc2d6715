package ir

// UpperCamel turns a lower_snake name into UpperCamelCase: "queue_url" ->
// "QueueUrl", "md5_of_body" -> "Md5OfBody", "a__b_" -> "AB". It is the one
// spelling of that rule: the checker suggests names with it (order_id ->
// OrderId) and aws_json names an operation's target and a field's member with
// it (providers/awsjson), so what the checker calls a field's member is what
// goes on the wire.
func UpperCamel(name string) string {
	b := make([]byte, 0, len(name))
	up := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' {
			up = true
			continue
		}
		if up && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		b = append(b, c)
	}
	return string(b)
}
