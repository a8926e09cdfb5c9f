"""zeep (a SOAP client) against a fake SOAP 1.1 service: the WSDL is served, each call answers
a real ``soap:Fault`` (HTTP 500, ``faultcode``/``faultstring``/``detail``) or a transport
failure before SOAP (an HTML 401 from the front, a 404 for the WSDL, a 503). Fault codes are
the generic ``soap:Client``/``soap:Server`` and WS-Security's ``wsse:FailedAuthentication``;
the meaning is in the fault string."""

from __future__ import annotations

from typing import Any

from corpus_live.core import (
    AUTH,
    INT,
    NET,
    NF,
    RL,
    Http,
    Reply,
    family,
    http_setup,
    transport_cases,
)

FAM = family("zeep", "fake SOAP 1.1 service (WSDL and faults)", http_setup, half="heldout4")

TNS = "http://example.org/billing"

WSDL = f"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://schemas.xmlsoap.org/wsdl/"
    xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
    xmlns:xsd="http://www.w3.org/2001/XMLSchema"
    xmlns:tns="{TNS}" targetNamespace="{TNS}">
  <types>
    <xsd:schema targetNamespace="{TNS}" elementFormDefault="qualified">
      <xsd:element name="GetInvoice">
        <xsd:complexType><xsd:sequence>
          <xsd:element name="invoiceId" type="xsd:string"/>
        </xsd:sequence></xsd:complexType>
      </xsd:element>
      <xsd:element name="GetInvoiceResponse">
        <xsd:complexType><xsd:sequence>
          <xsd:element name="amount" type="xsd:decimal"/>
        </xsd:sequence></xsd:complexType>
      </xsd:element>
    </xsd:schema>
  </types>
  <message name="GetInvoiceIn"><part name="parameters" element="tns:GetInvoice"/></message>
  <message name="GetInvoiceOut"><part name="parameters" element="tns:GetInvoiceResponse"/></message>
  <portType name="BillingPort">
    <operation name="GetInvoice"><input message="tns:GetInvoiceIn"/><output message="tns:GetInvoiceOut"/></operation>
  </portType>
  <binding name="BillingBinding" type="tns:BillingPort">
    <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
    <operation name="GetInvoice">
      <soap:operation soapAction="{TNS}/GetInvoice"/>
      <input><soap:body use="literal"/></input>
      <output><soap:body use="literal"/></output>
    </operation>
  </binding>
  <service name="BillingService">
    <port name="BillingPort" binding="tns:BillingBinding">
      <soap:address location="__ADDRESS__"/>
    </port>
  </service>
</definitions>
"""


def _call(url: str) -> Any:
    from zeep import Client
    from zeep.transports import Transport

    client = Client(url + "/billing?wsdl", transport=Transport(timeout=1, operation_timeout=1))
    return client.service.GetInvoice(invoiceId="INV-2024-0042")


def _fault(code: str, string: str, detail: str = "") -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?>'
        '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"'
        ' xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/'
        'oasis-200401-wss-wssecurity-secext-1.0.xsd">'
        "<soap:Body><soap:Fault>"
        f"<faultcode>{code}</faultcode><faultstring>{string}</faultstring>"
        + (f"<detail>{detail}</detail>" if detail else "")
        + "</soap:Fault></soap:Body></soap:Envelope>"
    )


def _serve(status: int, body: str, content_type: str, wsdl_status: int = 200) -> Any:
    def run(ctx: Http) -> Any:
        url = ctx.http.url
        wsdl = WSDL.replace("__ADDRESS__", url + "/billing")
        ctx.http.set(status, body, {}, content_type)

        def route(method: str, path: str, data: bytes) -> Reply | None:
            if method == "GET":
                return Reply(wsdl_status, wsdl if wsdl_status == 200 else body, {}, content_type)
            return None

        ctx.http.route = route
        return _call(url)

    return run


XML = "text/xml; charset=utf-8"
HTML = "text/html; charset=utf-8"


def _soap(
    id: str, code: str, string: str, expect: frozenset[str], why: str, detail: str = ""
) -> None:
    FAM.add(id, expect, f"soap:Fault {code}: {why}", _serve(500, _fault(code, string, detail), XML))


_soap(
    "failed_authentication",
    "wsse:FailedAuthentication",
    "The security token could not be authenticated or authorized",
    AUTH,
    "WS-Security rejected the username token",
)
_soap(
    "client_not_authorized",
    "soap:Client",
    "Access denied: user 'billing-bot' is not authorized to call GetInvoice",
    AUTH,
    "the user may not call the operation",
)
_soap(
    "invoice_not_found",
    "soap:Client",
    "Invoice INV-2024-0042 does not exist",
    NF,
    "the invoice does not exist",
    "<errorCode>INVOICE_NOT_FOUND</errorCode>",
)
_soap(
    "throttled",
    "soap:Server",
    "Request limit exceeded: too many requests, try again later",
    RL,
    "the service throttles the caller",
)
_soap(
    "bad_value",
    "soap:Client",
    "Server was unable to read request. ---&gt; There is an error in XML document (1, 312). "
    "---&gt; Input string was not in a correct format.",
    INT,
    "the request does not parse (the pack's input)",
)
_soap(
    "server_exception",
    "soap:Server",
    "Server was unable to process request. ---&gt; Object reference not set to an instance of "
    "an object.",
    NET | INT,
    "the service crashed on its side",
)
FAM.add(
    "front_401",
    AUTH,
    "HTTP 401 from the front before any SOAP (zeep reads the well-formed page as a fault)",
    _serve(
        401,
        "<html><head><title>401 Authorization Required</title></head><body>"
        "<h1>Authorization Required</h1></body></html>",
        HTML,
    ),
)
FAM.add(
    "wsdl_404",
    NF,
    "HTTP 404: the WSDL is not there",
    _serve(404, "<html><body><h1>Not Found</h1></body></html>", HTML, wsdl_status=404),
)
FAM.add(
    "unavailable_503",
    NET,
    "HTTP 503 from the front: the service is down",
    _serve(
        503,
        "<html><body><h1>503 Service Unavailable</h1><br>No server is available to handle "
        "this request.<br></body></html>",
        HTML,
    ),
)
transport_cases(FAM, lambda host, port: _call(f"http://{host}:{port}"), dns_port=80)
