package main

import "fmt"

// Handle is called for every request with the event as a string-keyed map.
func Handle(event map[string]interface{}) (map[string]interface{}, error) {
	name, _ := event["message"].(string)
	if name == "" {
		name = "world"
	}
	fmt.Println("greeting", name)
	return map[string]interface{}{"reply": "hello " + name}, nil
}
