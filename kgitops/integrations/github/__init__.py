"""The GitHub REST adapter: the only package that talks to GitHub (stdlib ``urllib`` only).

It does one job for the GitOps workflows: keep exactly one pull-request comment per marker
up to date. The comment carries a hidden HTML marker (``<!-- kgitops:plan-prod -->``); a run
finds the comment with that marker *that the token's own identity wrote* (``GET /user``, or
``github-actions[bot]`` for a workflow's GITHUB_TOKEN) and edits it in place, or creates it,
so a pull request pushed ten times shows one plan comment, not ten; a marked comment someone
else wrote is never edited (a marker is text anyone can copy)::

    client = GitHubClient(token, "https://api.github.com")
    upsert_comment(client, "acme/topics", 42, plan_markdown, marker="plan-prod")
    # -> CommentResult(action="created" | "updated" | "unchanged", ...)

Every failure is a ``GitHubError`` whose message says what to do: a missing permission names
the permission (``pull-requests: write``), a rate limit waits for the reset (bounded by
``max_wait``) and retries, a 404 says what was not found. The token is sent only to the API
host it was given for (pagination links elsewhere are refused) and never appears in a message.

The modules, each one concern: ``transport`` (HTTP: the token, deadlines, redirects, size
caps, retries and rate limits, GitHub's answers turned into ``GitHubError``), ``client``
(``GitHubClient``: the REST endpoints kgitops calls and the records they return), ``body``
(a comment body: its marker, cut to GitHub's limit) and ``upsert`` (the one marked comment or
issue kept up to date). Import each name from its module.
"""
