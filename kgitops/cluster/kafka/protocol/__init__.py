"""Kafka's own message schemas (Apache License 2.0, from kafka-clients 4.1.2's
``common/message/``) for the APIs kafka-python 3.0 has no class for; kafka-python builds the
request and response classes from them (``ApiMessage, load_json=...``), as it does from
the schemas it ships."""
