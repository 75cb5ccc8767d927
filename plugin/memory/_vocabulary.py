"""Word lists used by the load-decision rules (:mod:`promptcache.memory._classifier`,
:mod:`promptcache.memory._general_knowledge`) and the subject rules (:mod:`promptcache.memory._subjects`).

Data, not logic: general English words, grouped by the role they play. They were written from general English
usage (project-tracking, office and household vocabulary; English function words), not taken from any labelled
question set; adding a word here changes what the rules see, nothing else. Every entry is lower case; multi-word
entries are matched with single spaces or hyphens between the words.
"""

from __future__ import annotations

__all__ = [
    "ANAPHORIC_PRONOUNS",
    "APOSTROPHE_LESS",
    "ATTRIBUTE_NOUNS",
    "AUXILIARIES",
    "ELLIPTICAL_OPENERS",
    "ELLIPTICAL_TAILS",
    "ORG_NOUNS",
    "SLOT_MODIFIERS",
    "STATE_ATTRIBUTES",
    "STATE_WORDS",
    "TIME_ANCHORS",
    "EXPLANATORY_OPENERS",
    "INSTANCE_MODIFIERS",
    "REQUEST_FRAMES",
    "RULE_NOUNS",
    "TOPIC_OPENERS",
    "MONTHS",
    "TRIVIA_VERBS",
    "WEEKDAYS",
    "WORK_NOUNS",
]


def _words(text: str) -> tuple[str, ...]:
    """``"a, b c, d"`` -> ``("a", "b c", "d")`` (a comma-separated list; order kept, duplicates dropped)."""
    return tuple(dict.fromkeys(w.strip() for w in text.split(",") if w.strip()))


# things a person or team works on, tracks or is waiting for
WORK_NOUNS: tuple[str, ...] = _words(
    "order, ticket, build, deploy, deployment, release, sprint, pr, pull request, branch, migration, "
    "shipment, delivery, package, parcel, invoice, payment, refund, booking, reservation, flight, "
    "meeting, deadline, eta, task, project, report, draft, proposal, budget, test suite, test, pipeline, "
    "server, cluster, incident, outage, backlog, milestone, roadmap, demo, review, appointment, "
    "prescription, claim, case, account, subscription, contract, quote, estimate, job, run, experiment, "
    "training run, dataset, bug, issue, feature, rollout, story, epic, runbook, playbook, dashboard, "
    "wiki, channel, repo, repository, spec, doc, document, status page, hotfix, patch, fix, deal, lease, "
    "grant, application, campaign, launch, renovation, inspection, permit, shift, rota, rotation, queue, "
    "environment, staging, production, database, api, service, website, site, app, laptop, truck, "
    "warehouse, store, office, class, exam, results, numbers, figures, forecast, pitch, offer, "
    "interview, onboarding, checklist, slides, deck, thesis, paper, submission, recall, audit, vote, "
    "merger, round, visa, bill, car, appointment, promo, promotion, redesign, move, catering, gala, "
    "event, conference, trip, itinerary, hire, candidate, opening, vacancy, patient, ward, bed, room, "
    "vendor, supplier, client, customer, landlord, tenant, contractor, error, errors, log, logs, alert, alerts, "
    "warning, crash, failure, thread, email, e-mail, message, call, discussion, conversation, chat, notes, "
    "transcript, memo, minutes, decision, policy, delay, route, gate"
)

# groups and recurring events of an organisation; with a determiner ("the team", "the retro") they point at
# one particular organisation's state
ORG_NOUNS: tuple[str, ...] = _words(
    "team, squad, department, org, organisation, organization, company, firm, "
    "board, committee, standup, stand-up, retro, retrospective, all-hands, offsite, town hall, kickoff, "
    "kick-off, planning, sync, one-on-one, headcount, payroll, org chart, velocity, agenda, minutes, "
    "action items, finance, legal, hr, ops, sales, marketing, support, engineering, management, "
    "leadership, night shift, day shift, front desk, reception, lab, clinic, school, auditors"
)

# words for where a piece of work stands
STATE_WORDS: tuple[str, ...] = _words(
    "done, left, remaining, pending, open, closed, finished, blocked, blocking, failing, failed, "
    "overdue, outstanding, waiting, stuck, merged, shipped, resolved, fixed, assigned, scheduled, "
    "confirmed, approved, delayed, due, down, up, broken, late, behind, ahead, ready, live, signed, "
    "sent, submitted, published, cancelled, canceled, postponed, booked, paid, arrived, launched, "
    "rolled out, deployed, on track, at risk, slipping, on hold, in progress, under review, back up, "
    "offline, missing, out"
)

# what one asks about a piece of work: "what is the <attribute> of/for ..."
STATE_ATTRIBUTES: tuple[str, ...] = _words(
    "status, plan, agenda, date, release date, due date, "
    "deadline, eta, timeline, schedule, owner, progress, holdup, hold-up, blocker, blockers, next step, "
    "next steps, results, outcome, decision, verdict, headcount, velocity, budget, balance, "
    "forecast, priority, estimate, latest, news, word from, word on, update, situation, backlog, "
    "burn rate, runway, turnout, attendance, occupancy, order number, password, code, link, address"
)

# words that tie a question to a particular moment of someone's life or work
TIME_ANCHORS: tuple[str, ...] = _words(
    "today, tonight, tomorrow, yesterday, currently, right now, so far, at the moment, as of now, "
    "anymore, latest, still, yet, this week, this weekend, this morning, this afternoon, this evening, "
    "this month, this quarter, this sprint, this year, next week, next weekend, next month, "
    "next quarter, next sprint, next time, last night, last week, last month, last quarter, last sprint, "
    "last year, last time, last call, last meeting, last night's, tomorrow's, today's, tonight's, "
    "yesterday's, this week's, next week's, last week's, recently, lately, earlier, soon, on time, "
    "the last, the next"
)

WEEKDAYS: tuple[str, ...] = _words("monday, tuesday, wednesday, thursday, friday, saturday, sunday")

MONTHS: tuple[str, ...] = _words(
    "january, february, march, april, may, june, july, august, september, october, november, december"
)

AUXILIARIES: tuple[str, ...] = _words(
    "is, are, was, were, be, been, do, does, did, has, have, had, can, could, will, would, should, "
    "shall, may, might, must, 's, 're, isn't, aren't, wasn't, weren't, doesn't, don't, didn't, hasn't, "
    "haven't, can't, won't, wouldn't, shouldn't"
)

# pronouns that point back at something said earlier ("it" is handled apart: it is often expletive)
ANAPHORIC_PRONOUNS: tuple[str, ...] = _words(
    "its, they, them, their, theirs, he, him, his, she, her, hers, those, these, this one, that one, "
    "the one, the other one, the other, the others, the first one, the second one, the third one, "
    "the last one, the latter, the former, the same, both of them, either of them, neither of them, "
    "the rest"
)

# openings that continue the previous turn rather than start a new topic
ELLIPTICAL_OPENERS: tuple[str, ...] = _words(
    "and, but, so, also, or, plus, then, ok and, okay and, ok so, okay so, what about, how about, "
    "what else, anything else, who else, where else, why not, how come, any news, any update, "
    "any updates, any word, any idea, same, since when, for how long, until when, which one, which ones, "
    "in that case, if so, if not, otherwise, meaning, as in, tell me more, more details, elaborate, go on, how so, "
    "why so, what do you mean, why do you say, really, are you sure"
)

# words that, closing a question, continue the previous turn ("... too?", "... again?")
ELLIPTICAL_TAILS: tuple[str, ...] = _words(
    "too, as well, again, instead, then, else, either, give an example, give me an example, give some examples, "
    "show an example, show me an example, more detail, in more detail, in simpler terms"
)

# imperative / request forms that ask for an explanation of a topic
EXPLANATORY_OPENERS: tuple[str, ...] = _words(
    "explain, give an example of, give me an example of, give examples of, show me how, show how, define, describe, summarise, summarize, "
    "outline, compare, contrast, tell me about, tell me how, tell me why, tell me what, "
    "give me an overview of, give me an introduction to, give me a summary of, give an overview of, "
    "teach me, help me understand, eli5, what is meant by, can you explain, could you explain, "
    "please explain, can you define, can you describe, could you describe, can you tell me about, "
    "can you summarise, can you summarize, i'd like to understand, i want to understand"
)

# verbs of "who <verb> <famous work/thing>?" questions about recorded history
TRIVIA_VERBS: tuple[str, ...] = _words(
    "invented, discovered, wrote, painted, composed, founded, built, "
    "designed, directed, created, coined, developed, proved, first, won, sang, played, led, ruled, "
    "killed, kills, signed"
)

# the head noun of an attribute being stated ("my favourite colour is ...", "the release date is ...")
ATTRIBUTE_NOUNS: tuple[str, ...] = _words(
    "name, nickname, colour, color, food, drink, dish, band, song, film, movie, book, sport, language, address, "
    "email, e-mail, phone number, number, birthday, age, date, deadline, eta, time, location, city, country, "
    "hometown, timezone, time zone, employer, job, title, job title, role, position, salary, rate, price, cost, "
    "budget, status, owner, assignee, blocker, version, target, goal, plan, priority, size, height, weight, diet, allergy, major, "
    "degree, editor, ide, os, blood type, shoe size, release date, launch date, due date, start date, end date, "
    "go-live date, venue, capacity, headcount, stack, framework, region, limit, quota, sla, currency"
)

# modifiers that, after "the", single out one particular instance ("the new pricing", "the current plan")
INSTANCE_MODIFIERS: tuple[str, ...] = _words(
    "new, current, latest, old, updated, revised, upcoming, recent, previous, final, proposed, agreed, draft, "
    "pending, existing, planned"
)

# noun-phrase openings that name a general topic ("Difference between TCP and UDP?", "Pros and cons of ...")
TOPIC_OPENERS: tuple[str, ...] = _words(
    "difference between, differences between, pros and cons of, advantages of, disadvantages of, benefits of, "
    "meaning of, definition of, history of, examples of, types of, overview of, introduction to, basics of, "
    "how to, ways to, tips for, best way to, best practices for"
)

# request frames around a question that do not make it about the speaker ("I'd like to know how ...")
REQUEST_FRAMES: tuple[str, ...] = _words(
    "i'd like to know, i would like to know, i'd like to understand, i want to know, i want to understand, "
    "i want to learn, i'd like to learn, i wonder, i was wondering, i'm curious, i am curious, do you know, "
    "can you tell me, could you tell me, i've always wondered, i never understood"
)

# modifiers that make a noun phrase an attribute slot holding one value at a time
SLOT_MODIFIERS: tuple[str, ...] = _words("favourite, favorite, preferred, usual, current, main, primary, default")

# contractions typed without the apostrophe in chat ("whats", "doesnt"), mapped to their spelling; only forms that
# are not also other English words ("its", "were", "well", "id", "shell" are left out)
APOSTROPHE_LESS: dict[str, str] = {
    "whats": "what's",
    "hows": "how's",
    "whos": "who's",
    "wheres": "where's",
    "whens": "when's",
    "thats": "that's",
    "isnt": "isn't",
    "arent": "aren't",
    "wasnt": "wasn't",
    "werent": "weren't",
    "doesnt": "doesn't",
    "dont": "don't",
    "didnt": "didn't",
    "cant": "can't",
    "wont": "won't",
    "hasnt": "hasn't",
    "havent": "haven't",
    "im": "I'm",
    "ive": "I've",
    "youre": "you're",
    "theyre": "they're",
    "whys": "why's",
}

# what an organisation sets for itself: its rules, procedures and the values it fixes ("the process for ...", "the
# approval limit for ...", "the fee for ..."); asked "for/to/in" something, the answer depends on whose rules
RULE_NOUNS: tuple[str, ...] = _words(
    "process, procedure, protocol, rule, rules, guideline, guidelines, requirement, requirements, steps, workflow, "
    "limit, limits, allowance, entitlement, quota, threshold, cutoff, cut-off, discount, fee, fees, rate, rates, "
    "price, prices, pricing, cost, charge, charges, penalty, approval, sign-off, lead time, turnaround, window, "
    "notice period, probation period, dress code, template, form, criteria, eligibility, allocation, tariff"
)
