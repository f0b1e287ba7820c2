"""HubSpot API emulator: the endpoints the target-account sync, the ownership slice, the
engagement sync, the deal worker, the reconciliation and Morpheus's outbox (its writes) use,
over real HTTP.

Modules: ``emulator`` (the server, routing, ``main``), ``portal`` (the stored lists, companies,
contacts, owners, engagements, deals, custom properties and associations, and the methods
tests read and change them with), ``lists``/``companies``/``contacts``/``owners``/
``engagements``/``deals``/``objects`` (upserts)/``properties`` (one API family each),
``search`` (the search every object type shares) and ``associations`` (the v4 association
reads and default associations of every object type, one store), ``faults`` (auth, rate
limits and the HubSpot-specific faults), ``params`` (query parameters and paging cursors),
``fixtures`` (``build_data`` and the sample portal), ``webhooks``
(:class:`WebhookSender`: deliveries POSTed to a target URL with HubSpot's v3 signature).

Endpoints (responses follow HubSpot's OpenAPI files in ``tests/emulators/hubspot-openapi``)::

    GET  /crm/v3/lists/{listId}                   endpoint "list"        ListFetchResponse
    GET  /crm/v3/lists/{listId}/memberships       endpoint "memberships" ApiCollectionResponse-
         ?limit=1..250 (default 100)&after=CURSOR                        JoinTimeAndRecordId
    POST /crm/v3/objects/companies/batch/read     endpoint "batch_read"  BatchResponseSimple-
         {"inputs":[{"id"}],"properties":[..],"propertiesWithHistory":[]}  PublicObject (200) or
                                                                           ...WithErrors (207)
    GET  /crm/v3/owners?limit=1..500&after=N      endpoint "owners"      CollectionResponse-
         &archived=true|false                                              PublicOwnerForwardPaging
    POST /crm/v3/objects/contacts/batch/update    endpoint               BatchResponseSimple-
         {"inputs":[{"id","properties"}]} (<=100)   "contacts_batch_update"  PublicObject (200) or
                                                                           ...WithErrors (207)
    POST /crm/v3/objects/contacts/batch/read      endpoint "contacts_batch_read" (as companies)
    PUT  /crm/v3/lists/{listId}/memberships/add   endpoint "memberships_add" Memberships-
         ["recordId", ...]                                                 UpdateResponse
    POST /crm/v3/objects/{calls|emails|meetings|  endpoint                 CollectionResponse-
         notes|tasks}/search (filter and ascending  "engagements_search"    WithTotalSimple-
         order on hs_lastmodifieddate, <= 200)                               PublicObject
    POST /crm/v3/objects/deals/search (0-3)       endpoint "deals_search"    (as engagements)
    POST /crm/v3/objects/contacts/search (0-1)    endpoint "contacts_search" (on lastmodifieddate)
    POST /crm/v3/objects/deals/batch/read (0-3)   endpoint "deals_batch_read" (as companies,
         and propertiesWithHistory)
    POST /crm/v4/associations/{type}/contacts/    endpoint "associations_batch_read"
         batch/read {"inputs":[{"id","after"}]}   BatchResponsePublicAssociationMultiWithLabel
         ({type}: deals or an engagement type)

The writes of Morpheus's outbox::

    POST /crm/v3/objects/{contacts|tasks|calls}/  endpoint "{type}_batch_upsert"
         batch/upsert {"inputs":[{"idProperty",   BatchResponseSimplePublicUpsertObject (200)
         "id","properties"}]} (<= 100)            or ...WithErrors (207)
    POST /crm/v4/associations/{from}/{to}/batch/  endpoint "associations_associate_default"
         associate/default {"inputs":[{"from":    BatchResponsePublicDefaultAssociation (200,
         {"id"},"to":{"id"}}]}                    or 207 with errors)
    POST /crm/v3/lists {"name","objectTypeId",    endpoint "lists_create"  ListCreateResponse
         "processingType"}
    GET  /crm/v3/lists/object-type-id/{objectTypeId}/name/{listName}
                                                  endpoint "list_by_name"  ListFetchResponse
    PUT  /crm/v3/lists/{listId}/memberships/      endpoint "memberships_add_and_remove"
         add-and-remove {"recordIdsToAdd":[..],   MembershipsUpdateResponse
         "recordIdsToRemove":[..]}
    DELETE /crm/v3/lists/{listId}/memberships     endpoint "memberships_clear"  204
    POST /crm/v3/properties/{objectType}          endpoint "properties_create"  201 property
         {"name","label","type","fieldType",      (409 when the name exists)
         "groupName","hasUniqueValue"}
    GET  /crm/v3/properties/{objectType}/{name}   endpoint "property_read"  200 property / 404

Behaviour worth knowing:

* Memberships are sorted by recordId (numerically when numeric) and paged by an opaque keyset
  cursor, so removing a member between pages neither skips nor repeats anyone.
* Batch read answers 400 for > 100 inputs or a body missing ``inputs``/``properties``/
  ``propertiesWithHistory`` (all three are required by the spec), 207 naming missing ids with
  category OBJECT_NOT_FOUND, 200 otherwise. ``hs_object_id``, ``createdate`` and
  ``hs_lastmodifieddate`` are always returned, like HubSpot. A requested property without a
  value comes back as ``null`` (HubSpot's documented behaviour, although the spec types property
  values as plain strings); ``cleared_properties="omit"`` or ``"empty"`` changes that.
* Contacts batch update answers 400 for > 100 inputs, a repeated id or a non-string property
  value, 207 naming unknown ids (OBJECT_NOT_FOUND) and 200 otherwise; ``""`` clears a value.
  ``contact(id)["writes"]`` counts the updates a record received.
* Memberships add works on MANUAL/SNAPSHOT lists only (400 otherwise, 404 for an unknown
  list); records that do not exist are reported in ``recordIdsMissing`` and existing members
  are ignored, so adding twice changes nothing.
* The search of engagements (tasks too), deals and contacts takes the generic object-search
  request (contacts.json's ``PublicObjectSearchRequest``; every CRM object's search shares it),
  filters on the modification time only (``hs_lastmodifieddate``; ``lastmodifieddate`` for
  contacts; ``GTE``/``GT``/``LTE``/``LT``/``EQ``, epoch ms or ISO), sorts on it ascending only
  (400 otherwise), and refuses (400) to page past 10,000 results of one query, as HubSpot
  does. A type may be named by its object type id (``0-3`` for deals, ``0-1`` for contacts).
  ``set_engagement(type, id, properties, contact_ids=, modified_at=)`` adds an engagement;
  ``add_deal(id, stage=, pipeline=, owner_id=, amount=, name=, contact_ids=, modified_at=)``
  a deal, ``set_deal_stage(id, stage, modified_at=)`` moves it (its ``hs_lastmodifieddate``
  and its ``dealstage`` history with it); ``set_contact_property(id, name, value,
  modified_at=)`` changes a contact's property and its ``lastmodifieddate``. Engagements,
  deals and associations are not part of the data file.
* Association reads answer ``toObjectId`` as a string (associations.json's type) and at most
  500 associations of one record per call, with ``paging.next.after`` for the rest.
* Upserts key each input by ``idProperty``: ``email`` (contacts; matched in any case, stored
  in lower case) or a property created with ``hasUniqueValue`` (``morpheus_lead_key`` on
  contacts, ``morpheus_intent_key`` on tasks and calls). Anything else, a key property that
  was never created included, is HubSpot's 400 "Unable to perform update/upsert by non-unique
  <objectTypeId> property <name>". A batch is refused whole (400) for > 100 inputs, the same
  record twice, a non-string value, an option the property does not have (task status,
  priority and type; call direction and status), an unparseable ``hs_timestamp``, a task or
  call created without one, a ``morpheus_*`` property not created, or a unique value another
  record holds. Each answer carries ``new``; ``writes`` in the stored record counts the
  upserts it received. Upserted calls and tasks are found by the engagement search.
* Default associations (task/call/email/meeting/note <-> contact, type ids 204/194/... and
  the reverse 203/193/...) are idempotent and stored both ways in one structure,
  :meth:`~.portal.Portal.associations` ``(from_type, to_type) -> {from_id: {to_ids}}``, which
  ``associations_batch_read``, ``set_engagement(contact_ids=)`` and ``add_deal(contact_ids=)``
  share: a task associated by ``associate/default`` is read back by ``batch/read``. An id that
  is not a record of its type fails that input: 207, the error's ``context`` naming
  ``fromObjectId`` or ``toObjectId``.
* Lists are created MANUAL/SNAPSHOT (DYNAMIC needs a ``filterBranch``); a name another list has
  (in any case) is a 400. ``add-and-remove`` takes at most 100,000 ids, reports records that do
  not exist in ``recordIdsMissing`` and ignores adding a member or removing a non-member;
  clearing works on lists of fewer than 100,000 members.
* Unique properties: ``morpheus_properties=True`` (or the sample data) creates them,
  ``False`` leaves a portal without them, as a fresh one is; ``POST /crm/v3/properties`` then
  creates them. No OpenAPI file is kept for that API: its shapes follow HubSpot's
  documentation (see ``tests/emulators/hubspot-openapi/README.md``).
* Test hooks: ``contacts()``, ``contact(id)``, ``contact_by_email(email)``, ``tasks()``,
  ``calls()``, ``complete_task(id)`` (COMPLETED, ``hs_lastmodifieddate`` moved forward),
  ``deal(id)``, ``list_by_name(name)``, ``list_members(id)``, ``associations(from, to)``,
  ``properties(type)``, ``unique_properties(type)``, ``set_morpheus_properties(present)``.
* Auth: when a token is configured every request needs ``Authorization: Bearer <token>``,
  else 401 INVALID_AUTHENTICATION.
* Rate limit (``rate_limit=100`` or ``190``): a rolling-window budget per ``rate_limit_interval_s``
  (10 s); every admitted response carries ``X-HubSpot-RateLimit-Max/-Remaining/
  -Interval-Milliseconds`` and an exhausted budget answers 429 TEN_SECONDLY_ROLLING.

Data format (``HubSpotEmulator(data)`` / ``HubSpotEmulator.from_file(path)`` / ``to_data()``)::

    {
      "token": "pat-na1-...",                       # optional; absent/null = no auth check
      "rate_limit": {"max_requests": 100, "interval_s": 10},   # optional
      "lists": {
        "19544": {
          "name": "APAC Target Accounts",
          "processingStatus": "COMPLETE",           # optional, default COMPLETE
          "processingType": "MANUAL",               # optional
          "size": 3,                                # optional; default = number of members
          "createdAt": "...", "updatedAt": "...",   # optional ISO timestamps
          "members": ["123", {"id": "456", "membershipTimestamp": "2026-07-01T00:00:00Z"}]
        }
      },
      "companies": {
        "123": {
          "properties": {"name": "Acme", "domain": "acme.com.sg", "website": null, ...},
          "createdAt": "...", "updatedAt": "...", "archived": false      # optional
        }
      },
      "contacts": {"501": {"properties": {"email": "c@x.com", "hubspot_owner_id": "1"}}},
      "owners": [{"id": "1", "email": "a@x.com", "firstName": "A", "lastName": "B",
                  "userId": 1, "archived": false}],
      "properties": {                               # optional; custom properties by type
        "contacts": [{"name": "morpheus_lead_key", "label": "Morpheus lead key",
                      "type": "string", "fieldType": "text",
                      "groupName": "contactinformation", "hasUniqueValue": true}]
      }
    }

Property values may be given as numbers or booleans; they are served as strings, as HubSpot
does. ``build_data()`` produces this format from flat company dicts.

Faults: ``emu.faults.add(Fault(...))`` or the helpers :meth:`HubSpotEmulator.fail_page`,
:meth:`~HubSpotEmulator.rate_limit`, :meth:`~HubSpotEmulator.unauthorized`,
:meth:`~HubSpotEmulator.duplicate_members`, :meth:`~HubSpotEmulator.misreport_list_size`,
:meth:`~HubSpotEmulator.report_processing_status`, :meth:`~HubSpotEmulator.drop_companies`,
:meth:`~HubSpotEmulator.fail_inputs` (a batch write answers 207, the named or every k-th
inputs failed and not written) and :meth:`~HubSpotEmulator.lose_answer` (the write is applied,
then the connection is reset, after ``hold`` seconds when given), plus the generic ``fail()``
and ``slow()`` (both work on every endpoint). See
:class:`~morpheus_pipelines.devtools.emulators._faults.Fault` for targeting.
"""

from .emulator import HubSpotEmulator, main
from .faults import RATE_LIMIT_POLICIES
from .fixtures import build_data, sample_data
from .webhooks import WebhookSender

__all__ = [
    "RATE_LIMIT_POLICIES",
    "HubSpotEmulator",
    "WebhookSender",
    "build_data",
    "main",
    "sample_data",
]
