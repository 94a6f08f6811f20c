"""The plan's renderers, which read its JSON form only, so they cannot disagree: ``text``
(the terminal's text, the plan JSON, Kafka's reassignment JSON), ``markdown`` (the pull
request comment) and ``access`` (the comment's access section)."""
