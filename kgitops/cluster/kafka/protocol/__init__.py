"""Wire layouts, in kafka-python's message-schema format, of the Kafka APIs kafka-python 3.0
has no class for (ConsumerGroupDescribe, KIP-848): the field order and types Kafka's protocol
defines, written here so kafka-python builds the request and response classes
(``ApiMessage, load_json=...``) as it does from the layouts it ships."""
