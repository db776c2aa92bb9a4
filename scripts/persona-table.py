#!/usr/bin/env python3
"""A generated persona table with Nemotron-Personas' columns, for examples,
tests and benchmarks (docs/populations.md). Not real people, and not the real
dataset: the same column names and kinds of values, drawn from a seeded
generator, so the same arguments always write the same bytes.

    scripts/persona-table.py --rows 300 --out data/personas/population.csv
    scripts/persona-table.py --rows 1000000 --out /tmp/people.parquet   # needs pyarrow

The format is the extension of --out: .csv, .jsonl or .parquet (written with
pyarrow, Snappy-compressed as pyarrow writes by default, in row groups of
100,000). Columns: uuid, persona, professional_persona, sex, age,
marital_status, education_level, occupation, city, state, country, and the
OCEAN traits openness, conscientiousness, extraversion, agreeableness,
neuroticism (numbers from 0 to 1, two decimals).
"""

import argparse
import csv
import json
import random
import sys
import uuid

COLUMNS = [
    "uuid", "persona", "professional_persona", "sex", "age", "marital_status",
    "education_level", "occupation", "city", "state", "country",
    "openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism",
]

# (state, weight, cities): weights roughly as the states' populations.
STATES = [
    ("CA", 12, ["Los Angeles", "San Diego", "Fresno", "Sacramento"]),
    ("TX", 9, ["Houston", "Austin", "El Paso", "Lubbock"]),
    ("FL", 7, ["Miami", "Tampa", "Orlando", "Tallahassee"]),
    ("NY", 6, ["New York", "Buffalo", "Rochester", "Albany"]),
    ("PA", 4, ["Philadelphia", "Pittsburgh", "Erie"]),
    ("IL", 4, ["Chicago", "Springfield", "Peoria"]),
    ("OH", 3, ["Columbus", "Cleveland", "Toledo"]),
    ("GA", 3, ["Atlanta", "Savannah", "Macon"]),
    ("WA", 2, ["Seattle", "Spokane", "Tacoma"]),
    ("MN", 2, ["Minneapolis", "Duluth", "Rochester"]),
    ("NM", 1, ["Albuquerque", "Santa Fe", "Las Cruces"]),
    ("VT", 1, ["Burlington", "Montpelier"]),
]
SEXES = [("Female", 51), ("Male", 49)]
MARITAL = ["never_married", "married_present", "divorced", "widowed", "separated"]
EDUCATION = [
    ("less_than_9th", 4), ("high_school", 27), ("some_college", 20),
    ("associates", 9), ("bachelors", 22), ("graduate", 14), ("doctorate", 4),
]
OCCUPATIONS = [
    "registered nurse", "retail salesperson", "software developer", "truck driver",
    "elementary school teacher", "accountant", "electrician", "cashier",
    "restaurant cook", "home health aide", "marketing manager", "farmer",
    "police officer", "pharmacist", "customer service representative", "retired",
]
HOBBIES = [
    "gardening", "woodworking", "birdwatching", "baking sourdough", "fantasy football",
    "quilting", "trail running", "local history", "chess", "fishing", "karaoke",
    "restoring old cars", "volunteering at the food bank", "watercolor painting",
]
TEMPERS = [
    "patient and warm", "blunt and busy", "curious and talkative", "careful and precise",
    "easily worried", "cheerful", "skeptical of big companies", "quiet and polite",
]


def weighted(rng, pairs):
    return rng.choices([p[0] for p in pairs], weights=[p[1] for p in pairs])[0]


def a(word):
    return ("an " if word[0] in "aeiou" else "a ") + word


def trait(rng):
    return round(min(1.0, max(0.0, rng.gauss(0.5, 0.18))), 2)


def person(rng):
    state, _, cities = rng.choices(STATES, weights=[s[1] for s in STATES])[0]
    city = rng.choice(cities)
    sex = weighted(rng, SEXES)
    age = rng.randint(18, 90)
    marital = "never_married" if age < 22 else rng.choice(MARITAL)
    education = weighted(rng, EDUCATION)
    occupation = "retired" if age >= 67 else rng.choice(OCCUPATIONS[:-1])
    hobby = rng.choice(HOBBIES)
    temper = rng.choice(TEMPERS)
    pronoun = "She" if sex == "Female" else "He"
    return {
        "uuid": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "persona": f"{a(temper).capitalize()} {occupation} from {city} who spends weekends on {hobby}.",
        "professional_persona": (
            f"{pronoun} has worked as {a(occupation)} for years and values clear answers."
            if occupation != "retired"
            else f"{pronoun} is retired and manages the household's accounts and orders."
        ),
        "sex": sex,
        "age": age,
        "marital_status": marital,
        "education_level": education,
        "occupation": occupation,
        "city": city,
        "state": state,
        "country": "USA",
        "openness": trait(rng),
        "conscientiousness": trait(rng),
        "extraversion": trait(rng),
        "agreeableness": trait(rng),
        "neuroticism": trait(rng),
    }


def people(rows, seed):
    rng = random.Random(seed)
    for _ in range(rows):
        yield person(rng)


def write_csv(rows, seed, out):
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in people(rows, seed):
            writer.writerow(row)


def write_jsonl(rows, seed, out):
    with open(out, "w", encoding="utf-8") as f:
        for row in people(rows, seed):
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def write_parquet(rows, seed, out):
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = None
    batch = []

    def flush():
        nonlocal writer
        table = pa.Table.from_pylist(batch)
        if writer is None:
            writer = pq.ParquetWriter(out, table.schema)
        writer.write_table(table)
        batch.clear()

    for row in people(rows, seed):
        batch.append(row)
        if len(batch) == 100_000:
            flush()
    if batch:
        flush()
    if writer is not None:
        writer.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if not 1 <= args.rows <= 10_000_000:
        sys.exit("--rows: use 1 to 10,000,000")
    writers = {".csv": write_csv, ".jsonl": write_jsonl, ".parquet": write_parquet}
    suffix = args.out[args.out.rfind("."):] if "." in args.out else ""
    if suffix not in writers:
        sys.exit(f"--out: name a .csv, .jsonl or .parquet file, not {args.out}")
    writers[suffix](args.rows, args.seed, args.out)


if __name__ == "__main__":
    main()
