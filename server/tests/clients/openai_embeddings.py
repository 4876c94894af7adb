"""The `openai` Python client (PyPI) pointed at quarry's POST /v1/embeddings.

Usage: openai_embeddings.py BASE_URL GOLDEN_JSONL. Embeds the golden file's non-empty texts
with the client's default encoding (base64, which it decodes) and with encoding_format
"float", one text alone, and sends the requests quarry must refuse; prints one JSON object
with what came back for the Rust test (server/tests/http_embeddings.rs) to check.
"""

import json
import sys

from openai import BadRequestError, OpenAI


def refused(call):
    try:
        call()
    except BadRequestError as error:
        return {"status": error.status_code, "message": error.message, "body": error.body}
    return None


def main():
    base_url, golden = sys.argv[1], sys.argv[2]
    client = OpenAI(base_url=base_url + "/v1", api_key="not-checked", max_retries=0, timeout=120)
    with open(golden, encoding="utf-8") as lines:
        texts = [json.loads(line)["text"] for line in lines if line.strip()]
    texts = [text for text in texts if text]
    model = "sentence-transformers/all-MiniLM-L6-v2"
    default = client.embeddings.create(model=model, input=texts, extra_body={"truncate": True})
    floats = client.embeddings.create(
        model=model, input=texts, encoding_format="float", extra_body={"truncate": True}
    )
    one = client.embeddings.create(model=model, input=texts[0])
    longest = max(texts, key=len)
    report = {
        "texts": texts,
        "model": default.model,
        "object": default.object,
        "usage": default.usage.model_dump(),
        "indexes": [item.index for item in default.data],
        "default": [list(item.embedding) for item in default.data],
        "float": [list(item.embedding) for item in floats.data],
        "one": list(one.data[0].embedding),
        "one_usage": one.usage.model_dump(),
        "refused": {
            "too_long": refused(lambda: client.embeddings.create(model=model, input=[texts[0], longest])),
            "empty": refused(lambda: client.embeddings.create(model=model, input="")),
            "dimensions": refused(lambda: client.embeddings.create(model=model, input="x", dimensions=64)),
        },
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
