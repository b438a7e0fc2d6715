package ir

import "testing"

func TestUpperCamel(t *testing.T) {
	cases := map[string]string{
		"receive_message":                "ReceiveMessage",
		"queue_url":                      "QueueUrl",
		"md5_of_body":                    "Md5OfBody",
		"max_number_of_messages":         "MaxNumberOfMessages",
		"message_system_attribute_names": "MessageSystemAttributeNames",
		"body":                           "Body",
		"a__b_":                          "AB",
		"order_id":                       "OrderId",
		"_x":                             "X",
		"Already":                        "Already",
		"x1_y":                           "X1Y",
		"":                               "",
	}
	for in, want := range cases {
		if got := UpperCamel(in); got != want {
			t.Errorf("UpperCamel(%q) = %q, want %q", in, got, want)
		}
	}
}
