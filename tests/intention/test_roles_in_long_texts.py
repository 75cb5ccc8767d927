"""The word-order part of the roles veto: in a short intention any two shared words that trade places change who
does what; in a long text (more than six content words a side) only names count, since passive voice and fronted
clauses reorder ordinary words in a paraphrase."""

from __future__ import annotations

from promptcache.intention._vetoes import ORDER_CHECK_WORDS, veto


def test_short_intentions_keep_every_swap():
    assert veto("alice owes bob money", "bob owes alice money") == "roles"
    assert veto("does the cat chase the dog", "does the dog chase the cat") == "roles"


def test_a_long_passive_rephrasing_is_not_a_role_swap():
    stored = "The rename_columns method of the Table class creates a new table with the columns renamed."
    asked = "A new table with the columns renamed is what the rename_columns method of the Table class creates."
    assert ORDER_CHECK_WORDS == 6
    assert veto(asked, stored) is None


def test_names_that_trade_places_in_a_long_text_still_differ():
    stored = "Ravi Shankar invited Anoushka to the concert in the old hall after the long summer festival ended."
    asked = "Anoushka invited Ravi Shankar to the concert in the old hall after the long summer festival ended."
    assert veto(asked, stored) == "roles"
