// payorch hosted card form: runs only on payorch's own origin (see docs/design.md, "The hosted card form").
// It checks the card with the same rules as the server (card-rules.js), sends it with the public key to
// this origin, and hands the one-time token to exactly one place: the parent window's allowed origin
// (postMessage with that target origin), the session's callback URL, or this origin's payment link.
// The card number and security code never leave this page except in that one same-origin request.
(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('checkout-config').textContent);
  var m = config.messages;
  var rules = window.payorchCardRules;
  var form = document.getElementById('card-form');
  var inputs = {
    holder: document.getElementById('holder'),
    number: document.getElementById('number'),
    expiry: document.getElementById('expiry'),
    securityCode: document.getElementById('security-code'),
  };
  var brandEl = document.getElementById('number-brand');
  var statusEl = document.getElementById('status');
  var formError = document.getElementById('form-error');
  var button = document.getElementById('submit');
  var embedded = window.parent !== window;

  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (all, key) {
      return Object.prototype.hasOwnProperty.call(values, key) ? String(values[key]) : all;
    });
  }

  // Embedded in a page that is not the allowed origin (frame-ancestors already stops that in browsers that
  // honour it; ancestorOrigins tells us in Chromium): show nothing usable.
  if (embedded) {
    var ancestors = window.location.ancestorOrigins;
    if (!config.parentOrigin || (ancestors && ancestors.length > 0 && ancestors[0] !== config.parentOrigin)) {
      form.hidden = true;
      formError.textContent = m.notAllowed;
      return;
    }
  }

  function digits(value) {
    return value.replace(/\D/g, '');
  }

  /** The library's card type for a number, with the API's brand name; undefined when unknown. */
  function cardOf(number) {
    var result = rules.validator.number(number, { luhnValidateUnionPay: true });
    var card = result.card;
    if (!card || !rules.brandOfType[card.type]) return undefined;
    return { card: card, brand: rules.brandOfType[card.type], result: result };
  }

  function formatNumber(value, card) {
    var gaps = card ? card.card.gaps : [4, 8, 12];
    var out = '';
    for (var i = 0; i < value.length; i++) {
      if (gaps.indexOf(i) !== -1) out += ' ';
      out += value[i];
    }
    return out;
  }

  function showBrand() {
    var number = digits(inputs.number.value);
    var card = number.length > 0 ? cardOf(number) : undefined;
    // Visible: the brand's name; read out: "Card brand: Visa" (the prefix is visually hidden).
    brandEl.textContent = '';
    if (card) {
      var label = fill(m.brandDetected, { brand: card.card.niceType });
      var hidden = document.createElement('span');
      hidden.className = 'visually-hidden';
      hidden.textContent = label.slice(0, label.indexOf(card.card.niceType));
      brandEl.appendChild(hidden);
      brandEl.appendChild(document.createTextNode(card.card.niceType));
    }
    brandEl.setAttribute('data-brand', card ? card.brand : '');
    inputs.securityCode.maxLength = card ? card.card.code.size : 4;
    return card;
  }

  inputs.number.addEventListener('input', function () {
    var number = digits(inputs.number.value).slice(0, 19);
    var card = showBrand();
    var formatted = formatNumber(number, card);
    if (formatted !== inputs.number.value) inputs.number.value = formatted;
  });

  inputs.expiry.addEventListener('input', function (event) {
    var value = digits(inputs.expiry.value).slice(0, 4);
    if (event.inputType && event.inputType.indexOf('delete') === 0) return;
    inputs.expiry.value = value.length > 2 ? value.slice(0, 2) + '/' + value.slice(2) : value;
  });

  function setError(name, message) {
    var input = inputs[name];
    var el = document.getElementById(input.id + '-error');
    el.textContent = message || '';
    if (message) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  }

  /** Same rule as the server (vault/card-validation.ts isExpired): valid through its month anywhere on Earth. */
  function isExpired(month, year2) {
    var local = new Date(Date.now() - 12 * 60 * 60 * 1000);
    var fullYear = 2000 + year2;
    return fullYear < local.getUTCFullYear() || (fullYear === local.getUTCFullYear() && month < local.getUTCMonth() + 1);
  }

  /** Checks every field; returns the card to send, or undefined after showing each problem. */
  function validate() {
    var errors = {};
    var holder = inputs.holder.value.trim().replace(/\s+/g, ' ');
    if (!holder) errors.holder = m.errorRequired;
    else if (holder.length < 3 || holder.length > 26) errors.holder = m.errorHolder;

    var raw = inputs.number.value.replace(/[\s-]/g, '');
    var card;
    if (!raw) errors.number = m.errorRequired;
    else if (!/^\d+$/.test(raw)) errors.number = m.errorNumberDigits;
    else {
      card = cardOf(raw);
      if (!card) errors.number = m.errorNumberBrand;
      else if (card.card.lengths.indexOf(raw.length) === -1) errors.number = fill(m.errorNumberLength, { brand: card.card.niceType, lengths: card.card.lengths.join(', ') });
      else if (!card.result.isValid) errors.number = m.errorNumberLuhn;
    }

    var expiry = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(inputs.expiry.value);
    var month, year;
    if (!inputs.expiry.value.trim()) errors.expiry = m.errorRequired;
    else if (!expiry) errors.expiry = m.errorExpiryFormat;
    else {
      month = Number(expiry[1]);
      year = Number(expiry[2]) % 100;
      if (month < 1 || month > 12) errors.expiry = m.errorExpiryFormat;
      else if (isExpired(month, year)) errors.expiry = m.errorExpiryPast;
      else if (2000 + year > new Date().getUTCFullYear() + rules.maxYearsAhead) errors.expiry = m.errorExpiryFar;
    }

    var code = inputs.securityCode.value.trim();
    if (!code) errors.securityCode = m.errorRequired;
    else if (card && (!/^\d+$/.test(code) || code.length !== card.card.code.size)) {
      errors.securityCode = fill(m.errorSecurityCode, { brand: card.card.niceType, size: card.card.code.size });
    } else if (!/^\d{3,4}$/.test(code)) errors.securityCode = m.errorRequired;

    var first;
    ['holder', 'number', 'expiry', 'securityCode'].forEach(function (name) {
      setError(name, errors[name]);
      if (errors[name] && !first) first = inputs[name];
    });
    if (first) {
      formError.textContent = m.errorSummary;
      first.focus();
      return undefined;
    }
    formError.textContent = '';
    return { number: raw, expiration_month: month, expiration_year: year, security_code: code, holder_name: holder, brand: card.brand };
  }

  /** Field errors the server named (problem+json `errors[].path`), shown on the field they belong to. */
  function showServerErrors(problem) {
    var shown = false;
    (problem && Array.isArray(problem.errors) ? problem.errors : []).forEach(function (e) {
      var path = String(e.path || '');
      var name = /number|brand/.test(path) ? 'number' : /security_code/.test(path) ? 'securityCode' : /expiration/.test(path) ? 'expiry' : /holder/.test(path) ? 'holder' : undefined;
      if (name) {
        setError(name, String(e.message || m.errorServer));
        shown = true;
      }
    });
    formError.textContent = problem && (problem.status === 404 || problem.status === 410) ? m.errorSession : shown ? m.errorSummary : m.errorServer;
  }

  function post(url, body, headers) {
    return fetch(url, {
      method: 'POST',
      credentials: 'omit',
      cache: 'no-store',
      headers: Object.assign({ 'content-type': 'application/json', accept: 'application/json, application/problem+json' }, headers || {}),
      body: JSON.stringify(body),
    }).then(function (res) {
      return res.text().then(function (text) {
        var json;
        try {
          json = text ? JSON.parse(text) : {};
        } catch (e) {
          json = {};
        }
        if (!res.ok) {
          json.status = json.status || res.status;
          throw json;
        }
        return json;
      });
    });
  }

  function clearCard() {
    inputs.number.value = '';
    inputs.securityCode.value = '';
    showBrand();
  }

  /** Hands the result to the one place allowed to have it. */
  function deliver(result) {
    if (config.mode === 'link') {
      return post(config.completeUrl, { token: result.token, checkout_session: config.reference.checkout_session }).then(function (outcome) {
        statusEl.setAttribute('data-outcome', outcome.status || '');
        statusEl.textContent = outcome.paid ? m.paid : outcome.status === 'PENDING' ? m.pending : m.declined;
        if (outcome.paid) {
          done = true;
          if (config.callbackUrl) {
            var back = document.createElement('a');
            back.id = 'continue';
            back.href = config.callbackUrl;
            back.textContent = m.backToMerchant;
            statusEl.appendChild(document.createTextNode(' '));
            statusEl.appendChild(back);
          }
          form.querySelectorAll('input, button').forEach(function (el) {
            el.disabled = true;
          });
        }
      });
    }
    var message = Object.assign({ type: config.mode === 'enrollment' ? 'payorch:enrolled' : 'payorch:token' }, result, config.reference);
    if (embedded) {
      // The target origin is the check: the browser drops the message unless the parent is that origin.
      window.parent.postMessage(message, config.parentOrigin);
      statusEl.setAttribute('data-outcome', 'SENT');
      statusEl.textContent = config.mode === 'enrollment' ? m.saved : m.tokenSent;
      return undefined;
    }
    if (config.callbackUrl) {
      var target = new URL(config.callbackUrl);
      if (result.token) target.searchParams.set('one_time_token', result.token);
      if (result.vaulted_token) target.searchParams.set('vaulted_token', result.vaulted_token);
      Object.keys(config.reference).forEach(function (key) {
        target.searchParams.set(key, config.reference[key]);
      });
      window.location.assign(target.toString());
      return undefined;
    }
    statusEl.setAttribute('data-outcome', 'SENT');
    statusEl.textContent = m.tokenSent;
    return undefined;
  }

  /**
   * A payment link's page has no checkout session until the shopper submits (a visit writes nothing): the
   * first submit makes one, later tries (another card after a decline) use it.
   */
  function checkoutReady() {
    if (config.submitUrl) return Promise.resolve();
    return post(config.sessionUrl, {}).then(function (answer) {
      config.submitUrl = answer.submit_url;
      config.reference.checkout_session = answer.checkout_session;
    });
  }

  function forgetSession() {
    config.submitUrl = null;
    delete config.reference.checkout_session;
  }

  var busy = false;
  var done = false;
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    if (busy) return;
    var card = validate();
    if (!card) return;
    busy = true;
    button.disabled = true;
    statusEl.removeAttribute('data-outcome');
    statusEl.textContent = m.working;
    var cardFields = {
      number: card.number,
      expiration_month: card.expiration_month,
      expiration_year: card.expiration_year,
      security_code: card.security_code,
      holder_name: card.holder_name,
    };
    // A checkout session's token: Yuno's `payment_method.card`; a customer session's enrollment: `card_data`.
    var body = config.submitBody ? Object.assign({}, config.submitBody, { card_data: cardFields }) : { payment_method: { type: 'CARD', card: cardFields } };
    checkoutReady()
      .then(function () {
        return post(config.submitUrl, body, { 'public-api-key': config.publicKey });
      })
      .then(function (answer) {
        clearCard();
        var data = answer.card_data || {};
        var shown = { brand: data.brand || card.brand, lfd: data.lfd || card.number.slice(-4) };
        return deliver(config.mode === 'enrollment' ? { vaulted_token: answer.vaulted_token, card: shown } : { token: answer.token, card: shown });
      })
      .catch(function (problem) {
        // A link's session that takes no more cards (or was paid meanwhile): the next try gets a new one.
        if (config.sessionUrl && problem && problem.status === 409) forgetSession();
        statusEl.textContent = '';
        showServerErrors(problem);
      })
      .then(function () {
        busy = false;
        button.disabled = done;
      });
  });

  if (embedded) window.parent.postMessage(Object.assign({ type: 'payorch:ready' }, config.reference), config.parentOrigin);
})();
